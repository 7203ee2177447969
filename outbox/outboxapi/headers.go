package outboxapi

import (
	"strings"
)

// maskedHeaders is an endpoint's headers as the API shows them: a value that looks
// like a credential (by its header's name, its scheme, or its shape) masked but for
// its scheme and its last four characters, enough to tell two apart
// (docs/outbox.md §4).
func maskedHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for name, value := range h {
		if credentialLike(name, value) {
			value = mask(value)
		}
		out[name] = value
	}
	return out
}

// credentialWords, in a header's name, mark its value as a credential.
var credentialWords = []string{"auth", "token", "secret", "key", "password", "passwd", "signature", "credential",
	"session", "cookie", "bearer", "jwt", "private"}

// schemes are the authentication schemes a credential value may start with.
var schemes = []string{"bearer ", "basic ", "token ", "digest ", "apikey ", "hmac "}

func credentialLike(name, value string) bool {
	lname := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lname, w) {
			return true
		}
	}
	lvalue := strings.ToLower(value)
	for _, s := range schemes {
		if strings.HasPrefix(lvalue, s) {
			return true
		}
	}
	return keyShaped(value)
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

// mask hides v but for an authentication scheme it starts with and, when it is
// long enough that they reveal little, its last four characters.
func mask(v string) string {
	prefix := ""
	lv := strings.ToLower(v)
	for _, s := range schemes {
		if strings.HasPrefix(lv, s) {
			prefix, v = v[:len(s)], v[len(s):]
			break
		}
	}
	if len(v) >= 16 {
		return prefix + "****" + v[len(v)-4:]
	}
	return prefix + "****"
}
