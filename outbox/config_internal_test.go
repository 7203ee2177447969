package outbox

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
)

// TestDefaultClientDoesNotCutConnects: the profile's timeout bounds connect and
// response together (OUTBOX.md §2 step 3), so the default client's own connect bound
// must not be shorter than any attempt may take: sajn's 30 s connect would otherwise
// be cut at the transport's 10 s default and recorded as a network error.
func TestDefaultClientDoesNotCutConnects(t *testing.T) {
	rules := transport.PublicOnly()
	for _, lease := range []time.Duration{0 /* the default */, 10 * time.Second} {
		c := Config{Egress: &rules, LeaseDuration: lease}.WithDefaults()
		o := &Outbox{cfg: c}
		connect := defaultClientOptions(c).ConnectTimeout
		for _, name := range ProfileNames {
			p, _ := Profile(name)
			if need := o.attemptTimeout(p); connect < need {
				t.Errorf("lease %v, profile %s: the client cuts connects at %v, the attempt may take %v", c.LeaseDuration, name, connect, need)
			}
		}
	}
}
