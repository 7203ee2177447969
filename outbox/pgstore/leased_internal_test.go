package pgstore

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestCompleteTakesTheLeasedDelivery: a completion that comes with the delivery its
// claim returned is decided on that delivery while the row carries its token: a
// delivery leased as it was published (alone, and in a group) and one claimed, as the
// engine passes them, are what reading their rows returns; a completion whose token
// the row no longer carries is read from the row, and not applied.
func TestCompleteTakesTheLeasedDelivery(t *testing.T) {
	ctx := context.Background()
	s, now := groupStore(t, false)
	alone := groupPublish("evt_alone", "b", `{}`, "", now)
	s.runGroup([]*groupedPublish{alone})
	group := []*groupedPublish{groupPublish("evt_g1", "a", `{}`, "", now), groupPublish("evt_g2", "b", `{}`, "", now)}
	s.runGroup(group)
	for _, r := range append(group, alone) {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	unleased := groupPublish("evt_claimed", "b", `{}`, "", now)
	unleased.p.Plan = func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{ID: "dlv_claimed", Account: "b", EventID: "evt_claimed", EventType: "t", EndpointID: ep.ID,
			Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}, nil, true
	}
	s.runGroup([]*groupedPublish{unleased})
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %+v %v", jobs, err)
	}
	leased := []outboxdriver.Delivery{alone.out.Deliveries[0], group[0].out.Deliveries[0], group[1].out.Deliveries[0], jobs[0].Delivery}
	for _, d := range leased {
		if d.LeaseUntil == nil {
			t.Fatalf("%s was not leased", d.ID)
		}
		row, err := s.getDelivery(ctx, s.read(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := normalizedDelivery(d); !reflect.DeepEqual(got, row) {
			t.Errorf("%s: the leased delivery %+v\nreads as %+v", d.ID, got, row)
		}
	}
	seen := map[string]int{}
	decide := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		seen[d.ID] = d.Attempts
		nd := d
		nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, now
		return outboxdriver.Change{Delivery: &nd}, nil
	}
	marked := leased[0]
	marked.Attempts = 7 // a mark: the store took this copy
	stale := jobs[0].Delivery
	applied, err := s.Complete(ctx, []outboxdriver.Completion{
		{DeliveryID: marked.ID, Token: outboxdriver.PublishLeaseToken(marked.ID), Delivery: &marked, Decide: decide},
		{DeliveryID: stale.ID, Token: "other", Delivery: &stale, Decide: decide},
	})
	if err != nil || !applied[0] || applied[1] {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if seen[marked.ID] != 7 {
		t.Errorf("the matching lease was decided on %d attempts, want the given delivery's 7", seen[marked.ID])
	}
	if _, ok := seen[stale.ID]; ok {
		t.Errorf("a lease the row does not carry was decided")
	}
}
