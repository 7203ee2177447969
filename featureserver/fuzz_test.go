package featureserver

import (
	"errors"
	"testing"
)

func FuzzParseBootstrap(f *testing.F) {
	f.Add([]byte("accounts:\n  - sid: a\n    name: A\n    api_token: 0123456789abcdef0123\n"))
	f.Add([]byte("accounts:\n  - {sid: a, name: A, api_token: 0123456789abcdef0123, applications: [{sid: b, name: B, call_hook: {url: 'wss://h/p#rc=2'}}]}\n"))
	f.Add([]byte("accounts: [\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		b, err := ParseBootstrap("fuzz.yaml", src)
		if err != nil {
			return
		}
		// Whatever parses is valid: every account has a sid, a name and a long token.
		for _, a := range b.Accounts {
			if a.Sid == "" || a.Name == "" || len(a.APIToken) < minTokenLength {
				t.Fatalf("accepted an invalid account %+v", a)
			}
		}
	})
}

func FuzzLoadConfig(f *testing.F) {
	f.Add("JAMBONES_HTTP_TIMEOUT", "10000")
	f.Add("JAMBONES_WS_MAX_PAYLOAD", "-1")
	f.Add(EnvListen, "127.0.0.1:99999")
	f.Add(EnvEgressAllow, "10.0.0.0/8,app.internal")
	f.Add(EnvDatabaseURL, "sqlite:/tmp/x.db")
	f.Add(EnvDatabaseURL, "postgres://u:p@127.0.0.1:5432/db?search_path=s")
	f.Add(EnvNodeID, "node-a")
	f.Add(EnvNodeURL, "http://10.0.0.1:8080")
	f.Add(EnvNodeLease, "1000")
	f.Add(EnvOutboxLease, "4000")
	f.Add(EnvSecretsKey, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,bad")
	f.Add(EnvTrustedProxies, "10.0.0.0/8,::1")
	f.Add(EnvOutboxEgressAllow, "203.0.113.0/24,hooks.internal")
	f.Fuzz(func(t *testing.T, name, value string) {
		c, err := LoadConfig(func(k string) string {
			if k == name {
				return value
			}
			return ""
		}, nil)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
			return
		}
		// What LoadConfig accepts, NewNode accepts: the two apply the same ranges.
		if err := c.validate(); err != nil {
			t.Fatalf("LoadConfig accepted what NewNode refuses: %v", err)
		}
		cc := c.CallControl
		if cc.HTTPTimeout <= 0 || cc.WSHandshakeTimeout <= 0 || cc.WSAckTimeout <= 0 || cc.WSMaxPayload < 1024 ||
			cc.WSPingInterval < 0 || cc.WebhookErrorReturn < 400 || cc.WebhookErrorReturn > 699 || c.MaxCalls < 1 {
			t.Fatalf("accepted an out-of-range configuration %+v", c)
		}
	})
}
