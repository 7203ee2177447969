package outboxtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testClaimReserve: a claim with Reserve claims no more than Reserve returns (and no
// more than Limit), asked with Limit; a Reserve of 0 leases nothing, in Claim and in
// CompleteClaim, whose outcomes are still recorded.
func testClaimReserve(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"))
	for i := range 6 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(time.Minute)
	reserving := func(limit, room int, token string, asked *[]int) outboxdriver.ClaimParams {
		return outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit, Token: token,
			Reserve: func(limit int) int { *asked = append(*asked, limit); return room }}
	}
	var asked []int
	if jobs, err := s.Claim(ctx, reserving(5, 0, "tok0", &asked)); err != nil || len(jobs) != 0 || len(asked) == 0 || asked[0] != 5 {
		t.Fatalf("reserve 0: %d jobs, %v, asked %v; want none, asked with the limit 5", len(jobs), err, asked)
	}
	asked = nil
	first, err := s.Claim(ctx, reserving(5, 2, "tok1", &asked))
	if err != nil || len(first) != 2 || first[0].Event.ID != "evt_0" || first[1].Event.ID != "evt_1" {
		t.Fatalf("reserve 2 of 5: %+v, %v; want the 2 earliest", first, err)
	}
	asked = nil
	if jobs, err := s.Claim(ctx, reserving(1, 3, "tok2", &asked)); err != nil || len(jobs) != 1 {
		t.Fatalf("reserve 3, limit 1: %d jobs, %v; want 1", len(jobs), err)
	}
	succeed := outboxdriver.Completion{DeliveryID: first[0].Delivery.ID, Token: "tok1",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			nd := d
			nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, now
			return outboxdriver.Change{At: now, Delivery: &nd}, nil
		}}
	asked = nil
	applied, jobs, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed},
		Next: reserving(10, 0, "tok3", &asked)})
	if err != nil || len(applied) != 1 || !applied[0] || len(jobs) != 0 || len(asked) == 0 || asked[0] != 10 {
		t.Fatalf("complete, reserve 0: applied %v, %d jobs, %v, asked %v", applied, len(jobs), err, asked)
	}
	if d, _ := getDelivery(t, s, "acct", first[0].Delivery.ID); d.Status != outboxdriver.DeliverySucceeded {
		t.Fatalf("the outcome beside a claim of none was not recorded: %+v", d)
	}
	succeed.DeliveryID = first[1].Delivery.ID
	applied, jobs, err = s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed},
		Next: reserving(10, 2, "tok4", &asked)})
	if err != nil || !applied[0] || len(jobs) != 2 || jobs[0].Event.ID != "evt_3" || jobs[0].Token != "tok4" {
		t.Fatalf("complete, reserve 2: applied %v, jobs %+v, %v; want evt_3 and evt_4", applied, jobs, err)
	}
	// What no claim took is still there for the next one.
	if rest := claim(t, s, now, 10, "tok5"); len(rest) != 1 || rest[0].Event.ID != "evt_5" {
		t.Fatalf("left over: %+v, want evt_5", rest)
	}
}
