package outbox

import (
	"net/http"
	"strings"
)

// maskedValue replaces a credential in a recorded header.
const maskedValue = "****"

// maskHeaders returns a copy of h fit to be stored and shown in the delivery log
// (docs/outbox.md §4): the value of every header that looks like it carries a
// credential is masked, an Authorization-style value keeping its scheme ("Basic
// ****"). Signatures are not credentials and are kept: a receiver debugging its
// verification needs them.
func maskHeaders(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for name, values := range h {
		if !credentialHeader(name) {
			out[name] = append([]string(nil), values...)
			continue
		}
		masked := make([]string, len(values))
		for i, v := range values {
			masked[i] = maskCredential(v)
		}
		out[name] = masked
	}
	return out
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
