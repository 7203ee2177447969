package outbox

import (
	"net/http"
	"strings"
)

// maskedValue replaces a credential in a recorded header.
const maskedValue = "****"

// maskHeaders returns a copy of h fit to be stored and shown in the delivery log
// (docs/outbox.md §1): a value is masked, an Authorization-style one keeping its
// scheme ("Basic ****"), when its header's name says it carries a credential, when
// it starts with an authentication scheme, or, in a header the outbox did not set
// itself (an endpoint's own headers, the request hook's), when it is shaped like a
// generated key. The outbox's own headers (signatures, ids, timestamps, the
// traceparent, the policy's delivery header named own) are kept: a receiver
// debugging its verification needs them.
func maskHeaders(h http.Header, own string) http.Header {
	out := make(http.Header, len(h))
	for name, values := range h {
		kept := make([]string, len(values))
		for i, v := range values {
			kept[i] = v
			if credentialHeader(name) || schemePrefixed(v) || !outboxHeader(name, own) && keyShaped(v) {
				kept[i] = maskCredential(v)
			}
		}
		out[name] = kept
	}
	return out
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

// schemePrefixed reports whether v starts with an authentication scheme.
func schemePrefixed(v string) bool {
	lv := strings.ToLower(strings.TrimSpace(v))
	for _, s := range []string{"bearer ", "basic ", "digest ", "token ", "apikey ", "hmac "} {
		if strings.HasPrefix(lv, s) {
			return true
		}
	}
	return false
}

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

// credentialWords are the parts of a header name that say it carries a credential.
var credentialWords = []string{"auth", "token", "secret", "password", "passwd", "key", "cookie", "session", "credential"}

// credentialHeader reports whether a header of that name is masked.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	if strings.HasSuffix(n, "-signature") || n == "idempotency-key" {
		return false
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// maskCredential masks v, keeping an authentication scheme it starts with.
func maskCredential(v string) string {
	if scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " "); ok && rest != "" && isToken(scheme) {
		return scheme + " " + maskedValue
	}
	return maskedValue
}

// isToken reports whether s is an HTTP token of letters and digits, as
// authentication schemes are (Basic, Bearer, Digest, AWS4-HMAC-SHA256).
func isToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
