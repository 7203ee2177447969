package transport

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// A refusal names the rules that made it and, for an address's range, the setting
// that can let it through; rules without names say neither.
func TestRefusalNamesTheRulesAndTheSetting(t *testing.T) {
	named := PublicOnly()
	named.Name, named.AllowSetting = "public-only rules of webhook endpoints", "SWITCHBOARD_OUTBOX_EGRESS_ALLOW"
	cases := []struct {
		name        string
		err         error
		wantSetting bool
	}{
		{"private address", named.CheckIP(netip.MustParseAddr("10.0.0.1")), true},
		{"IP literal in a URL", named.CheckURL(mustURL(t, "http://[fd00::1]/")), true},
		{"scheme", named.CheckURL(mustURL(t, "ftp://example.com/")), false},
		{"numeric host", named.CheckURL(mustURL(t, "http://2130706433/")), false},
	}
	for _, c := range cases {
		var re *RefusedError
		if !errors.As(c.err, &re) {
			t.Fatalf("%s: %v, want a *RefusedError", c.name, c.err)
		}
		msg := c.err.Error()
		if re.Rules != named.Name || !strings.Contains(msg, "(the public-only rules of webhook endpoints)") {
			t.Errorf("%s: %q does not name the rules", c.name, msg)
		}
		if got := strings.Contains(msg, "SWITCHBOARD_OUTBOX_EGRESS_ALLOW can allow it"); got != c.wantSetting {
			t.Errorf("%s: %q names the setting: %v, want %v", c.name, msg, got, c.wantSetting)
		}
	}
	if msg := PublicOnly().CheckIP(netip.MustParseAddr("10.0.0.1")).Error(); msg != "egress refused: 10.0.0.1: private (RFC 1918)" {
		t.Errorf("rules without a name: %q", msg)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
