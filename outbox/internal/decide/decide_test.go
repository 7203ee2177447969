package decide

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestRetryAfterCountsFromTheAnswer: a hold ends when the receiver said, however
// late the decision is recorded: Retry-After counts from the answer (an HTTP date is
// a moment), not from the decision.
func TestRetryAfterCountsFromTheAnswer(t *testing.T) {
	p, _ := policy.Profile(outboxdriver.ProfileSajn)
	answered := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := Result{Attempt: outboxdriver.Attempt{Status: 429, Class: outboxdriver.ClassThrottled}, RetryAfter: time.Minute,
		HasRetryAfter: true, AnsweredAt: answered}
	d := outboxdriver.Delivery{ID: "dlv_1", Status: outboxdriver.DeliveryPending, NextAttemptAt: answered}
	ep := outboxdriver.Endpoint{ID: "ep_1", Status: outboxdriver.EndpointActive}
	ch := Outcome(p, d, ep, r, answered.Add(10*time.Second), nil)
	if hold := ch.Endpoint.HoldUntil; hold == nil || !hold.Equal(answered.Add(time.Minute)) {
		t.Fatalf("hold until %v, want %v (a minute after the answer)", hold, answered.Add(time.Minute))
	}
	if next := ch.Delivery.NextAttemptAt; !next.Equal(answered.Add(time.Minute)) {
		t.Fatalf("next attempt %v, want the end of the hold", next)
	}
}
