package outbox

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
)

// TestOutcomeClasses: every class the retry core and the transport produce is
// stored under one of the names OUTBOX.md §2 step 4 gives.
func TestOutcomeClasses(t *testing.T) {
	want := map[retry.Class]retry.Class{
		retry.Success: "success", retry.Gone: "gone", retry.Throttled: "throttled",
		retry.Status4xx: "http_4xx", retry.Status5xx: "http_5xx", retry.Redirect: "redirect",
		retry.ResponseTimeout: "timeout", retry.Connect: "network", retry.HandshakeTimeout: "network",
		retry.Permanent: "network", retry.Unparseable: "network", retry.UnexpectedStatus: "network",
		retry.EgressRefused: "egress_refused", retry.Internal: "internal",
	}
	for in, out := range want {
		if got := outcomeClass(in); got != out {
			t.Errorf("outcomeClass(%s) = %s, want %s", in, got, out)
		}
	}
}

// TestRetryAfterCountsFromTheAnswer: a hold ends when the receiver said, however
// late the decision is recorded: Retry-After counts from the answer (an HTTP date is
// a moment), not from the decision.
func TestRetryAfterCountsFromTheAnswer(t *testing.T) {
	p, _ := Profile(ProfileSajn)
	answered := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := result{attempt: Attempt{Status: 429, Class: ClassThrottled}, retryAfter: time.Minute, hasRetryAfter: true, answeredAt: answered}
	d := Delivery{ID: "dlv_1", Status: DeliveryPending, NextAttemptAt: answered}
	ep := Endpoint{ID: "ep_1", Status: EndpointActive}
	dec := decide(p, d, ep, r, answered.Add(10*time.Second), nil)
	if hold := dec.change.Endpoint.HoldUntil; hold == nil || !hold.Equal(answered.Add(time.Minute)) {
		t.Fatalf("hold until %v, want %v (a minute after the answer)", hold, answered.Add(time.Minute))
	}
	if next := dec.change.Delivery.NextAttemptAt; !next.Equal(answered.Add(time.Minute)) {
		t.Fatalf("next attempt %v, want the end of the hold", next)
	}
}
