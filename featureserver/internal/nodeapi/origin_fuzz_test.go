package nodeapi

import (
	"strings"
	"testing"
)

// FuzzParseOrigin: what ParseOrigin accepts goes into a CSP header as it is, so it
// must be one source: no blank, comma, semicolon, quote or control character, a
// scheme of http or https, and parsing it again gives it back.
func FuzzParseOrigin(f *testing.F) {
	for _, seed := range []string{"https://app.example.com", "http://127.0.0.1:8080/", "HTTPS://A.Example:443", "https://[::1]:9443",
		"https://a.example/path", "https://a.example; script-src *", "https://a.example 'unsafe-inline'", "javascript:alert(1)",
		"https://u:p@a.example", "https://a.example:99999", "https://*.example.com", "https://a.example?x", "https://a.example#f", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOrigin(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(o, " \t\r\n,;'\"*") || strings.ContainsFunc(o, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("%q accepted as %q, not one CSP source", s, o)
		}
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			t.Fatalf("%q accepted as %q", s, o)
		}
		if again, err := ParseOrigin(o); err != nil || again != o {
			t.Fatalf("%q → %q → %q, %v", s, o, again, err)
		}
	})
}
