package webhooksig

import (
	"crypto/ed25519"
	"crypto/hmac"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
)

// DefaultTolerance is how far webhook-timestamp may be from the Verifier's clock, in
// either direction, when Verifier.Tolerance is zero. It is the spec libraries' value.
const DefaultTolerance = 300 * time.Second

// maxTimestampDigits keeps the timestamp inside int64 before parsing.
const maxTimestampDigits = 19

// Verifier checks incoming webhooks against the keys it trusts.
//
// A Verifier is safe for concurrent use once built; do not change its fields while it
// verifies.
type Verifier struct {
	// Secrets verify v1 (HMAC-SHA256) signatures.
	Secrets []Secret
	// PublicKeys verify v1a (ed25519) signatures.
	PublicKeys []PublicKey
	// Tolerance is the largest accepted distance between webhook-timestamp and Clock,
	// in the past or in the future. Zero or negative means DefaultTolerance (300 s).
	Tolerance time.Duration
	// Clock tells the current time. Nil means the wall clock.
	Clock retry.Clock
}

// NewVerifier builds a Verifier from serialized keys: "whsec_" secrets and "whpk_"
// public keys, in any mix, with the default tolerance and the wall clock. A private
// "whsk_" key or any other string is ErrMalformedSecret (a receiver needs only the
// public key); no key at all is ErrNoKeys.
func NewVerifier(encoded ...string) (*Verifier, error) {
	v := &Verifier{}
	for i, e := range encoded {
		switch {
		case strings.HasPrefix(e, SecretPrefix):
			sec, err := ParseSecret(e)
			if err != nil {
				return nil, fmt.Errorf("verifier key %d: %w", i, err)
			}
			v.Secrets = append(v.Secrets, sec)
		case strings.HasPrefix(e, PublicKeyPrefix):
			key, err := ParsePublicKey(e)
			if err != nil {
				return nil, fmt.Errorf("verifier key %d: %w", i, err)
			}
			v.PublicKeys = append(v.PublicKeys, key)
		default:
			return nil, fmt.Errorf("verifier key %d: %w: want a %q secret or a %q public key",
				i, ErrMalformedSecret, SecretPrefix, PublicKeyPrefix)
		}
	}
	if len(v.Secrets)+len(v.PublicKeys) == 0 {
		return nil, ErrNoKeys
	}
	return v, nil
}

// Verify checks one received webhook: its headers h and its body exactly as received.
// It returns nil when webhook-timestamp is within the tolerance and at least one v1 or
// v1a signature in webhook-signature matches one of the Verifier's keys. Otherwise it
// returns, checked in this order: ErrNoKeys, ErrMissingHeaders, ErrMalformedHeader (an
// id with "." or a non-visible character, a timestamp that is not canonical decimal
// seconds, a signature header without a well-formed entry), ErrTimestampTooOld or
// ErrTimestampTooNew, and ErrInvalidSignature. Signatures of unknown versions are
// ignored. MAC comparison is constant-time.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	if err := v.checkKeys(); err != nil {
		return err
	}
	id, tsText, sigText := headerValue(h, HeaderID), headerValue(h, HeaderTimestamp), headerValue(h, HeaderSignature)
	if id == "" || tsText == "" || sigText == "" {
		return fmt.Errorf("%w: need %s, %s and %s", ErrMissingHeaders, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	if problem := idProblem(id); problem != "" {
		return fmt.Errorf("%w: %s: %s", ErrMalformedHeader, HeaderID, problem)
	}
	unix, err := parseTimestamp(tsText)
	if err != nil {
		return err
	}
	if err := v.checkTimestamp(unix); err != nil {
		return err
	}
	sigs, err := ParseSignatureHeader(sigText)
	if err != nil {
		return err
	}
	if v.matches(sigs, id, unix, body) {
		return nil
	}
	return ErrInvalidSignature
}

func (v *Verifier) checkKeys() error {
	if len(v.Secrets)+len(v.PublicKeys) == 0 {
		return ErrNoKeys
	}
	// A zero Secret would be an empty HMAC key anyone can use, and a zero PublicKey
	// makes ed25519.Verify panic: refuse both as configuration errors.
	for i, sec := range v.Secrets {
		if len(sec.key) == 0 {
			return fmt.Errorf("%w: secret %d is the zero Secret", ErrNoKeys, i)
		}
	}
	for i, key := range v.PublicKeys {
		if len(key.key) != ed25519.PublicKeySize {
			return fmt.Errorf("%w: public key %d is the zero PublicKey", ErrNoKeys, i)
		}
	}
	return nil
}

func (v *Verifier) checkTimestamp(unix int64) error {
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var clock retry.Clock = retry.SystemClock{}
	if v.Clock != nil {
		clock = v.Clock
	}
	now := clock.Now()
	// Work in integer seconds: time.Unix overflows for timestamps near the int64 limit
	// and would turn a far-future header into a past one.
	behind, ahead := secondsApart(now.Unix(), unix)
	age := time.Duration(now.Nanosecond()) // the clock's fraction of a second
	switch {
	case behind > maxDurationSeconds:
		age = math.MaxInt64
	case behind > 0:
		age += time.Duration(behind) * time.Second
	case ahead > maxDurationSeconds:
		age = -math.MaxInt64
	default:
		age -= time.Duration(ahead) * time.Second
	}
	if age > tolerance {
		return fmt.Errorf("%w: %s %d is %s behind the clock, tolerance %s",
			ErrTimestampTooOld, HeaderTimestamp, unix, age.Truncate(time.Second), tolerance)
	}
	if age < -tolerance {
		return fmt.Errorf("%w: %s %d is %s ahead of the clock, tolerance %s",
			ErrTimestampTooNew, HeaderTimestamp, unix, (-age).Truncate(time.Second), tolerance)
	}
	return nil
}

// maxDurationSeconds is the most whole seconds a time.Duration holds, less one for the
// fraction added to it.
const maxDurationSeconds = uint64(math.MaxInt64/int64(time.Second)) - 1

// secondsApart returns how many seconds now is after ts (behind) or before it (ahead);
// one of them is zero. Unsigned arithmetic keeps it exact over the whole int64 range.
func secondsApart(now, ts int64) (behind, ahead uint64) {
	if now >= ts {
		return uint64(now) - uint64(ts), 0
	}
	return 0, uint64(ts) - uint64(now)
}

// matches reports whether any known-version signature verifies under any key. Each
// secret's MAC and the ed25519 message are computed at most once.
func (v *Verifier) matches(sigs []Signature, id string, unix int64, body []byte) bool {
	var macs [][]byte
	var msg []byte
	for _, sig := range sigs {
		switch sig.Version {
		case VersionHMAC:
			if macs == nil {
				macs = make([][]byte, len(v.Secrets))
				for i, sec := range v.Secrets {
					macs[i] = hmacContent(sec.key, id, unix, body)
				}
			}
			for _, mac := range macs {
				if hmac.Equal(mac, sig.Value) {
					return true
				}
			}
		case VersionEd25519:
			if len(v.PublicKeys) == 0 {
				continue
			}
			if msg == nil {
				msg = appendContent(make([]byte, 0, contentCap(id, body)), id, unix, body)
			}
			for _, key := range v.PublicKeys {
				if ed25519.Verify(key.key, msg, sig.Value) {
					return true
				}
			}
		}
	}
	return false
}

// parseTimestamp reads decimal Unix seconds. Unlike strconv.ParseInt it refuses signs,
// spaces and leading zeros: the header is produced by a machine, so anything else is
// tampering.
func parseTimestamp(text string) (int64, error) {
	if len(text) > maxTimestampDigits {
		return 0, fmt.Errorf("%w: %s has %d characters, at most %d digits allowed",
			ErrMalformedHeader, HeaderTimestamp, len(text), maxTimestampDigits)
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return 0, fmt.Errorf("%w: %s %q is not decimal Unix seconds", ErrMalformedHeader, HeaderTimestamp, text)
		}
	}
	if len(text) > 1 && text[0] == '0' {
		// The signed content carries the number, not the text: a padded variant of a
		// signed header would otherwise verify too.
		return 0, fmt.Errorf("%w: %s %q has a leading zero", ErrMalformedHeader, HeaderTimestamp, text)
	}
	unix, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q: %v", ErrMalformedHeader, HeaderTimestamp, text, err)
	}
	return unix, nil
}

// headerValue returns the first value of a header. It also finds keys that were stored
// without canonicalization (a map literal such as http.Header{"webhook-id": ...}).
func headerValue(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}
