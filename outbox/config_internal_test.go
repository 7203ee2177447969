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

// Rules added after endpoints were first stored are checked where endpoints are
// written; ResolvePolicy, which the dispatcher runs on stored endpoints, tolerates
// what they refuse (the profile's own header stays), so that such an endpoint keeps
// the rest of its policy.
func TestResolvePolicyToleratesWhatOnlyWritesRefuse(t *testing.T) {
	allowHTTP, header := true, "Authorization"
	o := Overrides{AllowHTTP: &allowHTTP, DeliveryHeader: &header, ScheduleSeconds: make([]float64, 150)}
	p, err := ResolvePolicy(ProfileDigize, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Profile != ProfileDigize || !p.AllowHTTP || p.DeliveryHeader != "digize-delivery" || p.MaxAttempts != maxAttemptsLimit {
		t.Fatalf("policy %+v", p)
	}
	if err := checkNewOverrides(o); err == nil {
		t.Fatal("checkNewOverrides accepted them")
	}
}
