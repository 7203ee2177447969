package outbox

import (
	"net/http"
	"strings"
	"unicode/utf8"
)

// One rule (credential) says which header values are credentials, wherever headers
// are shown (docs/outbox.md §1): an attempt's request headers as recorded
// (maskHeaders) and an endpoint's headers as the API, the console and the CLI show
// them (MaskedHeaders). Only how much of a masked value stays differs.

// maskedValue replaces a credential, or what follows its authentication scheme.
const maskedValue = "****"

// MaskedHeaders returns an endpoint's headers (Endpoint.Headers) as they are shown:
// a credential masked but for its authentication scheme and, when the rest is long
// enough that they reveal little (16 characters or more), its last four characters,
// enough for the endpoint's owner to tell two keys apart (docs/outbox.md §4).
func MaskedHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for name, v := range h {
		if credential(name, v, "") {
			v = maskCredential(v, true)
		}
		out[name] = v
	}
	return out
}

// maskHeaders returns a copy of an attempt's request headers fit to be stored and
// shown in the delivery log (docs/outbox.md §1): a credential keeps only its
// authentication scheme ("Basic ****"), nothing of the secret: the log is read by
// whoever reads deliveries, a consumer portal's users included. own is the policy's
// delivery header (Policy.DeliveryHeader).
func maskHeaders(h http.Header, own string) http.Header {
	out := make(http.Header, len(h))
	for name, values := range h {
		kept := make([]string, len(values))
		for i, v := range values {
			kept[i] = v
			if credential(name, v, own) {
				kept[i] = maskCredential(v, false)
			}
		}
		out[name] = kept
	}
	return out
}

// credential reports whether the value of header name is a credential: it starts
// with an authentication scheme, or, in a header the outbox does not set itself
// (outboxHeader; own names the policy's delivery header, if any), its name says it
// carries one or it is shaped like a generated key. The outbox's own headers
// (signatures, ids, timestamps, the traceparent) are shown: a receiver debugging its
// verification needs them, and the delivery id and trace ids look like keys.
func credential(name, value, own string) bool {
	if schemePrefixed(value) {
		return true
	}
	return !outboxHeader(name, own) && (credentialName(name) || keyShaped(value))
}

// outboxHeader reports whether the outbox sets a header of that name itself.
func outboxHeader(name, own string) bool {
	switch n := strings.ToLower(name); {
	case n == "webhook-id", n == "webhook-timestamp", n == "webhook-signature", n == "traceparent", n == "tracestate",
		n == "content-type", n == "user-agent", own != "" && strings.EqualFold(name, own):
		return true
	}
	return false
}

// credentialWords are the parts of a header name that say it carries a credential.
var credentialWords = []string{"auth", "token", "secret", "key", "password", "passwd", "signature", "credential",
	"session", "cookie", "bearer", "jwt", "private"}

// credentialName reports whether a header's name says it carries a credential.
// Idempotency-Key says key but carries none: the receiver deduplicates by it.
func credentialName(name string) bool {
	n := strings.ToLower(name)
	if n == "idempotency-key" {
		return false
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// schemes are the authentication schemes a credential may start with, each with the
// space that ends it.
var schemes = []string{"bearer ", "basic ", "digest ", "token ", "apikey ", "hmac "}

// scheme returns the authentication scheme v starts with (as v writes it, with its
// space), or "".
func scheme(v string) string {
	for _, s := range schemes {
		if len(v) >= len(s) && strings.EqualFold(v[:len(s)], s) {
			return v[:len(s)]
		}
	}
	return ""
}

// schemePrefixed reports whether v starts with an authentication scheme.
func schemePrefixed(v string) bool { return scheme(strings.TrimSpace(v)) != "" }

// keyShaped reports whether v looks like a generated key: 20 characters or more of
// letters, digits and -_.+/= with both letters and digits, no space.
func keyShaped(v string) bool {
	if len(v) < 20 {
		return false
	}
	var letters, digits bool
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters = true
		case c >= '0' && c <= '9':
			digits = true
		case strings.ContainsRune("-_.+/=", c):
		default:
			return false
		}
	}
	return letters && digits
}

// maskCredential masks v but for the authentication scheme it starts with and, when
// tail and the rest is 16 characters or more, the rest's last four characters.
func maskCredential(v string, tail bool) string {
	v = strings.TrimSpace(v)
	prefix := scheme(v)
	rest := v[len(prefix):]
	if tail && utf8.RuneCountInString(rest) >= 16 {
		r := []rune(rest)
		return prefix + maskedValue + string(r[len(r)-4:])
	}
	return prefix + maskedValue
}
