package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// Values of --scheme and of the "scheme" JSON key.
const (
	schemeAuto     = "auto"
	schemeStandard = "standard-webhooks"
	schemeJambonz  = "jambonz"
)

type verifyFlags struct {
	secrets     []string
	headers     []string
	headersFile string
	body        string
	tolerance   time.Duration
	scheme      string
	asJSON      bool
}

// verifyJSON is the stable --json contract of `verify`. Every key is always present;
// strings are empty and matched_secret is 0 when they do not apply.
type verifyJSON struct {
	Valid         bool   `json:"valid"`
	Scheme        string `json:"scheme"`
	Version       string `json:"version"`        // "v1" or "v1a" (Standard Webhooks, when valid)
	WebhookID     string `json:"webhook_id"`     // Standard Webhooks only
	Timestamp     string `json:"timestamp"`      // the signed time, RFC 3339 UTC
	MatchedSecret int    `json:"matched_secret"` // 1-based position of the --secret that matched
	Error         string `json:"error"`
}

// verdict is what verifying found: the JSON answer, the signed time when readable, and
// hints for a human (printed on stderr).
type verdict struct {
	verifyJSON
	sent  time.Time
	hints []string
}

// errReported ends the command with status 1 once the verdict is printed: run prints
// nothing more for an empty message.
var errReported = errors.New("")

func newVerifyCmd(c *cli) *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify --secret KEY -H 'Name: value'... [--body FILE]",
		Short: "Check the signature of a webhook received from Switchboard",
		Long: `Verify checks that a webhook really comes from Switchboard: give it the request's
headers (-H, or --headers with lines copied from a request dump), its body exactly as
received (--body FILE, or stdin), and the key you were given (--secret).

Two schemes are understood. With a webhook-signature header, Standard Webhooks:
--secret is the whsec_ secret (v1, e.g. an account's status_webhook_secret) or the
sender's whpk_ public key (v1a). With a Jambonz-Signature header, --secret is the
account's plain webhook_secret. When both headers are present Standard Webhooks is
checked; --scheme jambonz checks the other one. Repeat --secret during key rotation:
any one matching is enough.

The body must be byte for byte what was signed: echo and most editors add a trailing
newline, which makes the signature fail (use printf, or save the raw body).

Exit status: 0 when the signature is valid, 1 when it is not (wrong key, altered body,
timestamp outside --tolerance, malformed signature), 2 for bad usage (missing or
malformed key, header or body file): nothing was verified.`,
		Example: "  switchboard verify --secret \"$WHSEC\" --body body.json \\\n" +
			"    -H 'webhook-id: msg_2Kx' -H 'webhook-timestamp: 1795986000' -H 'webhook-signature: v1,K5oZ…'\n" +
			"  printf '%s' \"$BODY\" | switchboard verify --json --secret \"$SECRET\" -H \"Jambonz-Signature: $SIG\"\n" +
			"  switchboard verify --secret \"$WHSEC\" --headers request.txt --body body.json --tolerance 720h",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runVerify(c, f) },
	}
	fl := cmd.Flags()
	// StringArray, not StringSlice: header values and jambonz secrets may contain commas.
	fl.StringArrayVar(&f.secrets, "secret", nil, "whsec_ secret or whpk_ public key (Standard Webhooks), or the plain webhook secret (Jambonz-Signature); repeatable")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "a received header, 'Name: value' as in curl; repeatable")
	fl.StringVar(&f.headersFile, "headers", "", "file of received header lines 'Name: value' (a request line is skipped; a blank line ends them)")
	fl.StringVar(&f.body, "body", "-", "file holding the raw body; - reads stdin")
	fl.DurationVar(&f.tolerance, "tolerance", webhooksig.DefaultTolerance, "how far the signed time may be from this machine's clock, either way")
	fl.StringVar(&f.scheme, "scheme", schemeAuto, "auto, standard-webhooks or jambonz")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	return cmd
}

func runVerify(c *cli, f verifyFlags) error {
	if len(f.secrets) == 0 {
		return usageError("--secret is required: the whsec_ secret, whpk_ public key or webhook secret you were given")
	}
	for i, s := range f.secrets {
		if s == "" {
			return usageError("--secret #%d is empty (an unset shell variable?)", i+1)
		}
	}
	if f.tolerance <= 0 {
		return usageError("--tolerance=%s: want a positive duration such as 5m", f.tolerance)
	}
	h, err := collectHeaders(f.headersFile, f.headers)
	if err != nil {
		return usageError("%v", err)
	}
	scheme, err := pickScheme(h, f.scheme)
	if err != nil {
		return usageError("%v", err)
	}
	body, err := readBody(c, f.body)
	if err != nil {
		return usageError("%v", err)
	}
	// One instant for the verdict and for the age printed beside it.
	now := time.Now()
	var v verdict
	if scheme == schemeStandard {
		if v, err = verifyStandard(f.secrets, h, body, now, f.tolerance); err != nil {
			return usageError("%v", err)
		}
	} else {
		v = verifyJambonz(f.secrets, h.Get(webhooksig.JambonzSignatureHeader), body, now, f.tolerance)
	}
	if !v.sent.IsZero() {
		v.Timestamp = v.sent.UTC().Format(time.RFC3339)
	}
	if f.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v.verifyJSON); err != nil {
			return failure(err)
		}
	} else {
		fmt.Fprintln(c.stdout, verdictLine(v, now, len(f.secrets)))
	}
	for _, hint := range v.hints {
		fmt.Fprintln(c.stderr, "hint:", hint)
	}
	if !v.Valid {
		return failure(errReported)
	}
	return nil
}

// verifyStandard checks Standard Webhooks headers. A key that cannot be used is a
// usage error (the returned error); a signature that does not verify is a verdict.
func verifyStandard(secrets []string, h http.Header, body []byte, now time.Time, tolerance time.Duration) (verdict, error) {
	v := &webhooksig.Verifier{Tolerance: tolerance, Clock: fixedClock(now)}
	// slots[i] is how Matches names --secret #i+1, to tell which one matched (rotation).
	slots := make([]webhooksig.Match, len(secrets))
	for i, s := range secrets {
		switch webhooksig.KindOf(s) {
		case webhooksig.KindSigningKey:
			return verdict{}, fmt.Errorf("--secret #%d is a %s private signing key: verify with its %s public key (only the sender holds the private one)",
				i+1, webhooksig.SigningKeyPrefix, webhooksig.PublicKeyPrefix)
		case webhooksig.KindUnknown:
			msg := fmt.Sprintf("--secret #%d is neither a %s secret nor a %s public key, which webhook-signature needs (Switchboard status notifications use the account's status_webhook_secret)",
				i+1, webhooksig.SecretPrefix, webhooksig.PublicKeyPrefix)
			if h.Get(webhooksig.JambonzSignatureHeader) != "" {
				msg += "; to check Jambonz-Signature with a plain webhook secret, add --scheme jambonz"
			}
			return verdict{}, errors.New(msg)
		}
		slot, err := v.AddKey(s)
		if err != nil {
			return verdict{}, fmt.Errorf("--secret #%d: %v", i+1, err)
		}
		slots[i] = slot
	}
	out := verdict{verifyJSON: verifyJSON{Scheme: schemeStandard, WebhookID: h.Get(webhooksig.HeaderID)}}
	out.sent, _ = webhooksig.ClaimedTime(h)
	matches, err := v.Matches(h, body)
	switch {
	case errors.Is(err, webhooksig.ErrMissingHeaders):
		// Nothing to verify: the headers given are incomplete.
		return verdict{}, errors.New(strings.TrimPrefix(err.Error(), "webhooksig: "))
	case errors.Is(err, webhooksig.ErrInvalidSignature):
		out.Error = "signature does not match: the body, webhook-id, webhook-timestamp or key differ from those signed"
		out.hints = newlineHints(body)
		return out, nil
	case err != nil:
		out.Error = strings.TrimPrefix(err.Error(), "webhooksig: ")
		out.hints = timeHints(err, out.sent, now, tolerance)
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
func verifyJambonz(secrets []string, header string, body []byte, now time.Time, tolerance time.Duration) verdict {
	out := verdict{verifyJSON: verifyJSON{Scheme: schemeJambonz}}
	out.sent, _ = webhooksig.ClaimedJambonzTime(header)
	i, err := webhooksig.MatchJambonz(secrets, header, body, now, tolerance)
	if err == nil {
		out.Valid, out.MatchedSecret = true, i+1
		return out
	}
	out.Error = err.Error()
	out.hints = timeHints(err, out.sent, now, tolerance)
	if errors.Is(err, webhooksig.ErrInvalidSignature) {
		out.hints = newlineHints(body)
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

func verdictLine(out verdict, now time.Time, keys int) string {
	if !out.Valid {
		return "invalid: " + out.Error
	}
	line := "valid: Jambonz-Signature"
	if out.Scheme == schemeStandard {
		line = "valid: Standard Webhooks " + out.Version + " signature"
	}
	if keys > 1 {
		line += fmt.Sprintf(" (--secret #%d)", out.MatchedSecret)
	}
	if out.WebhookID != "" {
		line += ", webhook-id " + out.WebhookID
	}
	if !out.sent.IsZero() {
		line += fmt.Sprintf(", sent %s (%s)", out.Timestamp, relativeTime(out.sent, now))
	}
	return line
}

// pickScheme decides which signature to check from the headers present.
func pickScheme(h http.Header, want string) (string, error) {
	header := map[string]string{schemeStandard: webhooksig.HeaderSignature, schemeJambonz: webhooksig.JambonzSignatureHeader}
	if want == schemeAuto {
		// Standard Webhooks first, as the help says.
		for _, scheme := range []string{schemeStandard, schemeJambonz} {
			if h.Get(header[scheme]) != "" {
				return scheme, nil
			}
		}
		given := "none"
		if len(h) > 0 {
			given = strings.Join(slices.Sorted(maps.Keys(h)), ", ")
		}
		return "", fmt.Errorf("no %s or %s header given (headers given: %s)", header[schemeStandard], header[schemeJambonz], given)
	}
	name, ok := header[want]
	if !ok {
		return "", fmt.Errorf("--scheme=%q: want %s, %s or %s", want, schemeAuto, schemeStandard, schemeJambonz)
	}
	if h.Get(name) == "" {
		return "", fmt.Errorf("--scheme %s: no %s header given", want, name)
	}
	return want, nil
}

func readBody(c *cli, path string) ([]byte, error) {
	if path == "-" || path == "" {
		// Reading a terminal would wait for input nobody means to type.
		if isTerminal(c.stdin) {
			return nil, errors.New("no body: pipe it on stdin or give --body FILE")
		}
		body, err := io.ReadAll(c.stdin)
		if err != nil {
			return nil, fmt.Errorf("reading the body from stdin: %v", err)
		}
		return body, nil
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--body: %v", err)
	}
	return body, nil
}

// fixedClock is a retry.Clock stopped at one instant.
type fixedClock time.Time

func (f fixedClock) Now() time.Time { return time.Time(f) }
