package webhooksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JambonzSignatureHeader is the header that carries SignJambonz's value on call-control
// webhooks (docs/call-control.md §3).
const JambonzSignatureHeader = "Jambonz-Signature"

// maxJambonzSignatures bounds the v1 entries read from one Jambonz-Signature header so
// that a hostile header cannot make verification arbitrarily expensive.
const maxJambonzSignatures = 8

// maxJambonzTimestampDigits keeps t= inside int64 (and within reach of time.Unix).
const maxJambonzTimestampDigits = 12

// SignJambonz returns the Jambonz-Signature value for body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>". It cannot fail, but
// its result verifies only for a non-empty secret and a t after the Unix epoch:
// VerifyJambonz refuses the empty secret (anyone could sign with it) and a negative t.
func SignJambonz(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(jambonzMAC(secret, ts, body))
}

// SignJambonzAll is SignJambonz with a v1 entry per secret, in order: during a
// rotation a receiver that knows either secret verifies the hook (jambonz's
// verifier accepts any matching v1). Empty secrets are skipped.
func SignJambonzAll(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, secret := range secrets {
		if secret != "" {
			b.WriteString(",v1=" + hex.EncodeToString(jambonzMAC(secret, ts, body)))
		}
	}
	return b.String()
}

func jambonzMAC(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// JambonzSignature is a parsed Jambonz-Signature value.
type JambonzSignature struct {
	// Timestamp is t=, in Unix seconds.
	Timestamp int64
	// Signatures are the well-formed v1 entries, decoded (32 bytes each), in header
	// order.
	Signatures [][]byte
}

// String returns the value as SignJambonz writes it: "t=<unix>,v1=<hex>[,v1=<hex>...]".
func (s JambonzSignature) String() string {
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(strconv.FormatInt(s.Timestamp, 10))
	for _, sig := range s.Signatures {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(sig))
	}
	return b.String()
}

// ParseJambonzSignature reads "t=<digits>,v1=<64 hex>[,v1=...]", spaces around items
// allowed. Exactly one t (at most 12 decimal digits, no sign) and at least one
// well-formed v1 are required; other v1 entries are skipped, as Standard Webhooks
// verifiers skip signatures they cannot read, and items of other schemes are
// ignored. Anything else — an item that is not key=value, a second t, more than 8 v1
// entries — is an error wrapping ErrMalformedHeader, with no JambonzSignature.
func ParseJambonzSignature(header string) (JambonzSignature, error) {
	var (
		out    JambonzSignature
		hasTS  bool
		badSig bool
		seen   int
	)
	for item := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return JambonzSignature{}, jambonzMalformed("item %q is not key=value", clip(item))
		}
		switch key {
		case "t":
			if hasTS {
				return JambonzSignature{}, jambonzMalformed("more than one t")
			}
			if value == "" || strings.Trim(value, "0123456789") != "" || len(value) > maxJambonzTimestampDigits {
				return JambonzSignature{}, jambonzMalformed("t=%q is not a unix time", clip(value))
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return JambonzSignature{}, jambonzMalformed("t=%q: %v", clip(value), err)
			}
			out.Timestamp, hasTS = n, true
		case "v1":
			if seen++; seen > maxJambonzSignatures {
				return JambonzSignature{}, jambonzMalformed("more than %d v1 signatures", maxJambonzSignatures)
			}
			sig, err := hex.DecodeString(value)
			if err != nil || len(sig) != sha256.Size {
				badSig = true
				continue
			}
			out.Signatures = append(out.Signatures, sig)
		}
	}
	switch {
	case !hasTS:
		return JambonzSignature{}, jambonzMalformed("no t")
	case len(out.Signatures) == 0 && badSig:
		return JambonzSignature{}, jambonzMalformed("v1 is not %d hex bytes", sha256.Size)
	case len(out.Signatures) == 0:
		return JambonzSignature{}, jambonzMalformed("no v1 signature")
	}
	return out, nil
}

// VerifyJambonz checks a Jambonz-Signature header value against body with one secret:
// the timestamp must be within tolerance of now (0 or less means DefaultTolerance),
// either way, and one of the v1 signatures must be the secret's. It returns nil, or an
// error wrapping ErrNoKeys (an empty secret), ErrMalformedHeader (see
// ParseJambonzSignature), ErrTimestampTooOld or ErrTimestampTooNew, or
// ErrInvalidSignature. MAC comparison is constant-time.
func VerifyJambonz(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	_, err := MatchJambonz([]string{secret}, header, body, now, tolerance)
	return err
}

// MatchJambonz is VerifyJambonz during key rotation: it returns the index of the first
// of secrets whose signature the header carries. With no secrets, or an empty one
// among them, it is ErrNoKeys and checks nothing; its other errors are VerifyJambonz's,
// checked in the same order, and the index is then -1.
func MatchJambonz(secrets []string, header string, body []byte, now time.Time, tolerance time.Duration) (int, error) {
	if len(secrets) == 0 || slices.Contains(secrets, "") {
		return -1, errNoJambonzSecret
	}
	sig, err := ParseJambonzSignature(header)
	if err != nil {
		return -1, err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	skew := now.Sub(time.Unix(sig.Timestamp, 0))
	if skew > tolerance || skew < -tolerance {
		kind := ErrTimestampTooOld
		if skew < 0 {
			kind = ErrTimestampTooNew
		}
		return -1, &jambonzError{kind: kind, msg: fmt.Sprintf("Jambonz-Signature timestamp outside tolerance: t=%d is %s away from now",
			sig.Timestamp, skew.Abs().Round(time.Second))}
	}
	ts := strconv.FormatInt(sig.Timestamp, 10)
	for i, secret := range secrets {
		want := jambonzMAC(secret, ts, body)
		for _, s := range sig.Signatures {
			if hmac.Equal(s, want) {
				return i, nil
			}
		}
	}
	return -1, &jambonzError{kind: ErrInvalidSignature,
		msg: fmt.Sprintf("Jambonz-Signature does not match (%d v1 signature(s) checked)", len(sig.Signatures))}
}

// ClaimedJambonzTime returns the t= a Jambonz-Signature value claims, for display: it
// reads the first t= item that is a non-negative decimal even when the rest of the
// value is malformed, and reports false when there is none. It proves nothing; only
// VerifyJambonz does.
func ClaimedJambonzTime(header string) (time.Time, bool) {
	for item := range strings.SplitSeq(header, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(item), "t="); ok {
			if unix, err := strconv.ParseInt(v, 10, 64); err == nil && unix >= 0 {
				return time.Unix(unix, 0), true
			}
		}
	}
	return time.Time{}, false
}

// jambonzError keeps the Jambonz-Signature wording of a failure (what `switchboard
// verify` prints) while wrapping the package's sentinel for errors.Is.
type jambonzError struct {
	kind error
	msg  string
}

func (e *jambonzError) Error() string { return e.msg }
func (e *jambonzError) Unwrap() error { return e.kind }

var errNoJambonzSecret = &jambonzError{kind: ErrNoKeys, msg: "no webhook secret to verify Jambonz-Signature with"}

func jambonzMalformed(format string, args ...any) error {
	return &jambonzError{kind: ErrMalformedHeader, msg: "malformed Jambonz-Signature header: " + fmt.Sprintf(format, args...)}
}

// clip keeps error messages short when echoing hostile input.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
