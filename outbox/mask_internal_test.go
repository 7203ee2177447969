package outbox

import (
	"net/http"
	"strings"
	"testing"
)

// TestOneCredentialRule: an endpoint's headers as shown and an attempt's as recorded
// mask the same values, by the same signals (each value of a recorded header); the
// shown ones keep the last four characters of a long secret, the recorded ones
// nothing of it.
func TestOneCredentialRule(t *testing.T) {
	for _, c := range []struct {
		name, value    string
		shown, records string // "" : the value as it is
	}{
		{"Authorization", "Bearer sk_live_0123456789abcdef", "Bearer ****cdef", "Bearer ****"},
		{"Authorization", "Basic dXNlcjpwdw==", "Basic ****", "Basic ****"},
		{"X-Api-Key", "k1", "****", "****"},
		{"X-Hub-Signature", "sha256=0123456789abcdef", "****cdef", "****"}, // a static signature is a secret
		{"X-Forward", "bearer abc", "bearer ****", "bearer ****"},          // by its scheme, as written
		{"X-Upstream", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "****p7dc", "****"},
		{"X-Password", "correct horse battery staple", "****aple", "****"}, // no scheme: nothing kept of it
		{"X-Jwt", "ééééééééééééééééé", "****éééé", "****"},                 // characters, not bytes
		{"X-Tenant", "acme", "", ""},
		{"Idempotency-Key", "order-17", "", ""},
		{"User-Agent", "Acme-Webhooks/2.3.1-build45", "", ""}, // the outbox's own header, replaced
	} {
		shown := MaskedHeaders(map[string]string{c.name: c.value})[c.name]
		recorded := maskHeaders(http.Header{c.name: {c.value, c.value}}, "")[c.name]
		want := func(w string) string {
			if w == "" {
				return c.value
			}
			return w
		}
		if shown != want(c.shown) || recorded[0] != want(c.records) || recorded[1] != recorded[0] {
			t.Errorf("%s: %q shown %q, recorded %q; want %q and %q", c.name, c.value, shown, recorded, want(c.shown), want(c.records))
		}
	}
	// The outbox's own headers are recorded as sent, key-shaped as they are; the
	// policy's delivery header too.
	own := http.Header{"Webhook-Id": {"msg_2LJpC8b4Hx3K9Qm7Zt5Vn1Wy"}, "Webhook-Signature": {"v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="},
		"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "X-Delivery-Token": {"dlv_2LJpC8b4Hx3K9Qm7Zt5Vn1Wy"}}
	got := maskHeaders(own, "X-Delivery-Token")
	for name, v := range own {
		if got.Get(name) != v[0] || strings.Contains(got.Get(name), maskedValue) {
			t.Errorf("%s recorded %q, want %q", name, got.Get(name), v[0])
		}
	}
}
