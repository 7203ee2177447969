package transport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JambonzSignatureHeader is the header that carries SignJambonz's value.
const JambonzSignatureHeader = "Jambonz-Signature"

// DefaultSignatureTolerance is how far a signature's timestamp may be from now when
// VerifyJambonz is given no tolerance.
const DefaultSignatureTolerance = 300 * time.Second

// Errors returned by VerifyJambonz (wrapped, test with errors.Is).
var (
	ErrSignatureMalformed = errors.New("malformed Jambonz-Signature header")
	ErrSignatureExpired   = errors.New("Jambonz-Signature timestamp outside tolerance")
	ErrSignatureMismatch  = errors.New("Jambonz-Signature does not match")
	// ErrNoSecret: verification needs the secret; with an empty one, anyone could sign.
	ErrNoSecret = errors.New("no webhook secret to verify Jambonz-Signature with")
)

// SignJambonz returns the Jambonz-Signature value for body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>".
func SignJambonz(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(jambonzMAC(secret, ts, body))
}

func jambonzMAC(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// VerifyJambonz checks a Jambonz-Signature header value against body: the timestamp
// must be within tolerance of now (0 means DefaultSignatureTolerance) and one of the
// v1 signatures must match. Unknown schemes in the header are ignored, and so is a
// v1 entry that is not a signature when another one is. It returns nil, or an error
// wrapping ErrNoSecret (an empty secret), ErrSignatureMalformed, ErrSignatureExpired
// or ErrSignatureMismatch.
func VerifyJambonz(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrNoSecret
	}
	ts, sigs, err := parseJambonzSignature(header)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultSignatureTolerance
	}
	skew := now.Sub(time.Unix(ts, 0))
	if skew > tolerance || skew < -tolerance {
		return fmt.Errorf("%w: t=%d is %s away from now", ErrSignatureExpired, ts, skew.Abs().Round(time.Second))
	}
	want := jambonzMAC(secret, strconv.FormatInt(ts, 10), body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return fmt.Errorf("%w (%d v1 signature(s) checked)", ErrSignatureMismatch, len(sigs))
}

// maxSignatures bounds the v1 entries read from one header so a hostile header
// cannot make verification arbitrarily expensive.
const maxSignatures = 8

// parseJambonzSignature reads "t=<digits>,v1=<64 hex>[,v1=...]" (spaces around items
// allowed). Exactly one t is required and at least one well-formed v1; other v1
// entries are skipped, as Standard Webhooks verifiers skip signatures they cannot read.
func parseJambonzSignature(header string) (int64, [][]byte, error) {
	var (
		ts     int64
		hasTS  bool
		sigs   [][]byte
		badSig bool
		seen   int
	)
	for item := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return 0, nil, fmt.Errorf("%w: item %q is not key=value", ErrSignatureMalformed, clip(item))
		}
		switch key {
		case "t":
			if hasTS {
				return 0, nil, fmt.Errorf("%w: more than one t", ErrSignatureMalformed)
			}
			if value == "" || strings.Trim(value, "0123456789") != "" || len(value) > 12 {
				return 0, nil, fmt.Errorf("%w: t=%q is not a unix time", ErrSignatureMalformed, clip(value))
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("%w: t=%q: %v", ErrSignatureMalformed, clip(value), err)
			}
			ts, hasTS = n, true
		case "v1":
			if seen++; seen > maxSignatures {
				return 0, nil, fmt.Errorf("%w: more than %d v1 signatures", ErrSignatureMalformed, maxSignatures)
			}
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				badSig = true
				continue
			}
			sigs = append(sigs, sig)
		}
	}
	if !hasTS {
		return 0, nil, fmt.Errorf("%w: no t", ErrSignatureMalformed)
	}
	if len(sigs) == 0 && badSig {
		return 0, nil, fmt.Errorf("%w: v1 is not %d hex bytes", ErrSignatureMalformed, sha256.Size)
	}
	if len(sigs) == 0 {
		return 0, nil, fmt.Errorf("%w: no v1 signature", ErrSignatureMalformed)
	}
	return ts, sigs, nil
}

// clip keeps error messages short when echoing hostile input.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
