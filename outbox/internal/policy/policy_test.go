package policy

import (
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Rules added after endpoints were first stored are checked where endpoints are
// written; Resolve, which the dispatcher runs on stored endpoints, tolerates
// what they refuse (the profile's own header stays), so that such an endpoint keeps
// the rest of its policy.
func TestResolvePolicyToleratesWhatOnlyWritesRefuse(t *testing.T) {
	allowHTTP, header := true, "Authorization"
	o := outboxdriver.Overrides{AllowHTTP: &allowHTTP, DeliveryHeader: &header, ScheduleSeconds: make([]float64, 150)}
	p, err := Resolve(outboxdriver.ProfileDigize, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Profile != outboxdriver.ProfileDigize || !p.AllowHTTP || p.DeliveryHeader != "digize-delivery" || p.MaxAttempts != maxAttemptsLimit {
		t.Fatalf("policy %+v", p)
	}
	if err := CheckNew(o); err == nil {
		t.Fatal("CheckNew accepted them")
	}
}
