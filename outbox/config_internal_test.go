package outbox

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/transport"
)

// TestDefaultClientDoesNotCutConnects: the profile's timeout bounds connect and
// response together (docs/outbox.md §2 step 3), so the default client's own connect bound
// must not be shorter than any attempt may take: sajn's 30 s connect would otherwise
// be cut at the transport's 10 s default and recorded as a network error.
func TestDefaultClientDoesNotCutConnects(t *testing.T) {
	rules := transport.PublicOnly()
	for _, lease := range []time.Duration{0 /* the default */, 10 * time.Second} {
		c := Config{Egress: &rules, LeaseDuration: lease}.WithDefaults()
		connect := defaultClientOptions(c).ConnectTimeout
		for _, name := range policy.Names {
			p, _ := policy.Profile(name)
			if need := p.AttemptTimeout(c.LeaseDuration); connect < need {
				t.Errorf("lease %v, profile %s: the client cuts connects at %v, the attempt may take %v", c.LeaseDuration, name, connect, need)
			}
		}
	}
}
