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
// either direction, when Verifier.Tolerance is zero, and how far Jambonz-Signature's t=
// may be from now when VerifyJambonz is given no tolerance. It is the spec libraries'
// value.
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
// public keys, in any mix, with the default tolerance and the wall clock. Keys of each
// kind keep their order. A private "whsk_" key or any other string is
// ErrMalformedSecret (a receiver needs only the public key); no key at all is
// ErrNoKeys.
func NewVerifier(encoded ...string) (*Verifier, error) {
	v := &Verifier{}
	for i, e := range encoded {
		if _, err := v.AddKey(e); err != nil {
			return nil, fmt.Errorf("verifier key %d: %w", i, err)
		}
	}
	if len(v.Secrets)+len(v.PublicKeys) == 0 {
		return nil, ErrNoKeys
	}
	return v, nil
}

// AddKey parses one serialized key and appends it to the Verifier: a "whsec_" secret
// to Secrets, a "whpk_" public key to PublicKeys. It returns the Match by which
// Matches names that key. A private "whsk_" key or any other string is
// ErrMalformedSecret and leaves the Verifier unchanged. Do not call it while the
// Verifier verifies.
func (v *Verifier) AddKey(encoded string) (Match, error) {
	switch KindOf(encoded) {
	case KindSecret:
		sec, err := ParseSecret(encoded)
		if err != nil {
			return Match{}, err
		}
		v.Secrets = append(v.Secrets, sec)
		return Match{Version: VersionHMAC, Key: len(v.Secrets) - 1}, nil
	case KindPublicKey:
		key, err := ParsePublicKey(encoded)
		if err != nil {
			return Match{}, err
		}
		v.PublicKeys = append(v.PublicKeys, key)
		return Match{Version: VersionEd25519, Key: len(v.PublicKeys) - 1}, nil
	case KindSigningKey:
		return Match{}, fmt.Errorf("%w: a %s cannot verify: give its %s",
			ErrMalformedSecret, KindSigningKey, KindPublicKey)
	}
	return Match{}, fmt.Errorf("%w: want a %q secret or a %q public key",
		ErrMalformedSecret, SecretPrefix, PublicKeyPrefix)
}

// Match names one key that verified a message.
type Match struct {
	// Version is the scheme of the signature the key verified: VersionHMAC when Key
	// indexes the Verifier's Secrets, VersionEd25519 when it indexes its PublicKeys.
	Version string
	// Key is the index of the key in Secrets or PublicKeys.
	Key int
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
	_, err := v.verify(h, body, false)
	return err
}

// Matches verifies like Verify and reports every key that verifies the message:
// Secrets in order, then PublicKeys. During key rotation, a Match of the old key says
// the sender still signs with it. The error is the one Verify returns; it is nil
// exactly when at least one Match is returned.
func (v *Verifier) Matches(h http.Header, body []byte) ([]Match, error) {
	return v.verify(h, body, true)
}

// verify checks the headers, then the signatures: all keys when all is set, up to the
// first match otherwise.
func (v *Verifier) verify(h http.Header, body []byte, all bool) ([]Match, error) {
	if err := v.checkKeys(); err != nil {
		return nil, err
	}
	id, tsText, sigText := headerValue(h, HeaderID), headerValue(h, HeaderTimestamp), headerValue(h, HeaderSignature)
	if id == "" || tsText == "" || sigText == "" {
		return nil, fmt.Errorf("%w: need %s, %s and %s", ErrMissingHeaders, HeaderID, HeaderTimestamp, HeaderSignature)
	}
	if problem := idProblem(id); problem != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrMalformedHeader, HeaderID, problem)
	}
	unix, err := parseTimestamp(tsText)
	if err != nil {
		return nil, err
	}
	if err := v.checkTimestamp(unix); err != nil {
		return nil, err
	}
	sigs, err := ParseSignatureHeader(sigText)
	if err != nil {
		return nil, err
	}
	if matches := v.matches(sigs, id, unix, body, all); len(matches) > 0 {
		return matches, nil
	}
	return nil, ErrInvalidSignature
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

// matches returns the keys that some known-version signature verifies under: every
// one when all is set, else the first. Each secret's MAC and the ed25519 message are
// computed once.
func (v *Verifier) matches(sigs []Signature, id string, unix int64, body []byte, all bool) []Match {
	var found []Match
	for i, sec := range v.Secrets {
		mac := hmacContent(sec.key, id, unix, body)
		for _, sig := range sigs {
			if sig.Version == VersionHMAC && hmac.Equal(mac, sig.Value) {
				found = append(found, Match{Version: VersionHMAC, Key: i})
				if !all {
					return found
				}
				break
			}
		}
	}
	var msg []byte
	for i, key := range v.PublicKeys {
		for _, sig := range sigs {
			if sig.Version != VersionEd25519 {
				continue
			}
			if msg == nil {
				msg = appendContent(make([]byte, 0, contentCap(id, body)), id, unix, body)
			}
			if ed25519.Verify(key.key, msg, sig.Value) {
				found = append(found, Match{Version: VersionEd25519, Key: i})
				if !all {
					return found
				}
				break
			}
		}
	}
	return found
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

// ClaimedTime returns the webhook-timestamp the headers claim, for display: it reads
// any non-negative decimal, even one Verify refuses as malformed, and reports false
// when there is none. It proves nothing; only Verify does.
func ClaimedTime(h http.Header) (time.Time, bool) {
	unix, err := strconv.ParseInt(headerValue(h, HeaderTimestamp), 10, 64)
	if err != nil || unix < 0 {
		return time.Time{}, false
	}
	return time.Unix(unix, 0), true
}
