package sigcheck

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Values of --scheme and of the "scheme" JSON key.
const (
	SchemeAuto     = "auto"
	SchemeStandard = "standard-webhooks"
	SchemeJambonz  = "jambonz"
)

// JSON is the stable --json contract of `switchboard verify`. Every key is always present;
// strings are empty and matched_secret is 0 when they do not apply.
type JSON struct {
	Valid         bool   `json:"valid"`
	Scheme        string `json:"scheme"`
	Version       string `json:"version"`        // "v1" or "v1a" (Standard Webhooks, when valid)
	WebhookID     string `json:"webhook_id"`     // Standard Webhooks only
	Timestamp     string `json:"timestamp"`      // the signed time, RFC 3339 UTC
	MatchedSecret int    `json:"matched_secret"` // 1-based position of the --secret that matched
	Error         string `json:"error"`
}

// Verdict is what checking found: the JSON answer, the signed time when readable,
// and hints for a human.
type Verdict struct {
	JSON
	Sent  time.Time
	Hints []string
}

// Check checks the signature of a received webhook: its headers h and body, with
// the secrets given in order (during a rotation any one matching is enough), in
// scheme (SchemeAuto picks it from the headers), the signed time within tolerance of
// now. An error is bad usage (a key that cannot check this scheme, missing headers):
// nothing was verified. A signature that does not verify is a Verdict, not an error.
func Check(secrets []string, h http.Header, body []byte, scheme string, now time.Time, tolerance time.Duration) (Verdict, error) {
	scheme, err := PickScheme(h, scheme)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if scheme == SchemeStandard {
		if v, err = verifyStandard(secrets, h, body, now, tolerance); err != nil {
			return Verdict{}, err
		}
	} else {
		v = verifyJambonz(secrets, h.Get(webhooksig.JambonzSignatureHeader), body, now, tolerance)
	}
	if !v.Sent.IsZero() {
		v.Timestamp = v.Sent.UTC().Format(time.RFC3339)
	}
	return v, nil
}

// verifyStandard checks Standard Webhooks headers. A key that cannot be used is a
// usage error (the returned error); a signature that does not verify is a verdict.
func verifyStandard(secrets []string, h http.Header, body []byte, now time.Time, tolerance time.Duration) (Verdict, error) {
	v := &webhooksig.Verifier{Tolerance: tolerance, Clock: fixedClock(now)}
	// slots[i] is how Matches names --secret #i+1, to tell which one matched (rotation).
	slots := make([]webhooksig.Match, len(secrets))
	for i, s := range secrets {
		switch webhooksig.KindOf(s) {
		case webhooksig.KindSigningKey:
			return Verdict{}, fmt.Errorf("--secret #%d is a %s private signing key: verify with its %s public key (only the sender holds the private one)",
				i+1, webhooksig.SigningKeyPrefix, webhooksig.PublicKeyPrefix)
		case webhooksig.KindUnknown:
			msg := fmt.Sprintf("--secret #%d is neither a %s secret nor a %s public key, which webhook-signature needs (Switchboard status notifications use the account's status_webhook_secret)",
				i+1, webhooksig.SecretPrefix, webhooksig.PublicKeyPrefix)
			if h.Get(webhooksig.JambonzSignatureHeader) != "" {
				msg += "; to check Jambonz-Signature with a plain webhook secret, add --scheme jambonz"
			}
			return Verdict{}, errors.New(msg)
		}
		slot, err := v.AddKey(s)
		if err != nil {
			return Verdict{}, fmt.Errorf("--secret #%d: %v", i+1, err)
		}
		slots[i] = slot
	}
	out := Verdict{JSON: JSON{Scheme: SchemeStandard, WebhookID: h.Get(webhooksig.HeaderID)}}
	out.Sent, _ = webhooksig.ClaimedTime(h)
	matches, err := v.Matches(h, body)
	switch {
	case errors.Is(err, webhooksig.ErrMissingHeaders):
		// Nothing to verify: the headers given are incomplete.
		return Verdict{}, errors.New(strings.TrimPrefix(err.Error(), "webhooksig: "))
	case errors.Is(err, webhooksig.ErrInvalidSignature):
		out.Error = "signature does not match: the body, webhook-id, webhook-timestamp or key differ from those signed"
		out.Hints = newlineHints(body)
		return out, nil
	case err != nil:
		out.Error = strings.TrimPrefix(err.Error(), "webhooksig: ")
		out.Hints = timeHints(err, out.Sent, now, tolerance)
		return out, nil
	}
	out.Valid = true
	// The first --secret, in the order given, that verifies.
	for i, slot := range slots {
		if slices.Contains(matches, slot) {
			out.MatchedSecret, out.Version = i+1, slot.Version
			break
		}
	}
	return out, nil
}

// verifyJambonz checks a Jambonz-Signature value with the secrets given.
func verifyJambonz(secrets []string, header string, body []byte, now time.Time, tolerance time.Duration) Verdict {
	out := Verdict{JSON: JSON{Scheme: SchemeJambonz}}
	out.Sent, _ = webhooksig.ClaimedJambonzTime(header)
	i, err := webhooksig.MatchJambonz(secrets, header, body, now, tolerance)
	if err == nil {
		out.Valid, out.MatchedSecret = true, i+1
		return out
	}
	out.Error = err.Error()
	out.Hints = timeHints(err, out.Sent, now, tolerance)
	if errors.Is(err, webhooksig.ErrInvalidSignature) {
		out.Hints = newlineHints(body)
	}
	return out
}

// timeHints says which way a timestamp outside the tolerance lies, which the jambonz
// error does not, and what to do about it.
func timeHints(err error, sent, now time.Time, tolerance time.Duration) []string {
	switch {
	case errors.Is(err, webhooksig.ErrTimestampTooOld):
		return []string{fmt.Sprintf("sent %s, --tolerance is %s: a larger one (e.g. 720h) checks an old capture; a receiver should still refuse it",
			relativeTime(sent, now), tolerance)}
	case errors.Is(err, webhooksig.ErrTimestampTooNew):
		return []string{fmt.Sprintf("sent %s: the sender's clock or this machine's is wrong", relativeTime(sent, now))}
	}
	return nil
}

// relativeTime reads "12s ago" or "3m0s in the future".
func relativeTime(t, now time.Time) string {
	age := now.Sub(t).Round(time.Second)
	if age < 0 {
		return (-age).String() + " in the future"
	}
	return age.String() + " ago"
}

// newlineHints points at the most common cause of a mismatch on the command line.
func newlineHints(body []byte) []string {
	if len(body) > 0 && body[len(body)-1] == '\n' {
		return []string{"the body ends with a newline: if echo or an editor added it, the bytes differ from those signed"}
	}
	return nil
}

func (out Verdict) Line(now time.Time, keys int) string {
	if !out.Valid {
		return "invalid: " + out.Error
	}
	line := "valid: Jambonz-Signature"
	if out.Scheme == SchemeStandard {
		line = "valid: Standard Webhooks " + out.Version + " signature"
	}
	if keys > 1 {
		line += fmt.Sprintf(" (--secret #%d)", out.MatchedSecret)
	}
	if out.WebhookID != "" {
		line += ", webhook-id " + out.WebhookID
	}
	if !out.Sent.IsZero() {
		line += fmt.Sprintf(", sent %s (%s)", out.Timestamp, relativeTime(out.Sent, now))
	}
	return line
}

// pickScheme decides which signature to check from the headers present.
func PickScheme(h http.Header, want string) (string, error) {
	header := map[string]string{SchemeStandard: webhooksig.HeaderSignature, SchemeJambonz: webhooksig.JambonzSignatureHeader}
	if want == SchemeAuto {
		// Standard Webhooks first, as the help says.
		for _, scheme := range []string{SchemeStandard, SchemeJambonz} {
			if h.Get(header[scheme]) != "" {
				return scheme, nil
			}
		}
		given := "none"
		if len(h) > 0 {
			given = strings.Join(slices.Sorted(maps.Keys(h)), ", ")
		}
		return "", fmt.Errorf("no %s or %s header given (headers given: %s)", header[SchemeStandard], header[SchemeJambonz], given)
	}
	name, ok := header[want]
	if !ok {
		return "", fmt.Errorf("--scheme=%q: want %s, %s or %s", want, SchemeAuto, SchemeStandard, SchemeJambonz)
	}
	if h.Get(name) == "" {
		return "", fmt.Errorf("--scheme %s: no %s header given", want, name)
	}
	return want, nil
}

// fixedClock is a retry.Clock stopped at one instant.
type fixedClock time.Time

func (f fixedClock) Now() time.Time { return time.Time(f) }
