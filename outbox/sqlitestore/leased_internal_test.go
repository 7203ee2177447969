package sqlitestore

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestCompleteTakesTheLeasedDelivery: a completion that comes with the delivery its
// claim returned is decided on that delivery while the row carries its token: a
// delivery leased as it was published and one claimed, as the engine passes them,
// are what reading their rows returns; a completion whose token the row no longer
// carries (reaped, claimed again) is read from the row, and not applied.
func TestCompleteTakesTheLeasedDelivery(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "leased.db", Options{})
	now := time.Now().Add(-time.Minute) // nanoseconds and a local zone, as the engine's clock gives
	for _, id := range []string{"ep_1", "ep_2"} {
		if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: outboxdriver.Endpoint{ID: id, Account: "acct",
			URL: "https://example.com/", Status: outboxdriver.EndpointActive, InFlightCap: 10, CreatedAt: now}}); err != nil {
			t.Fatal(err)
		}
	}
	lease := now.Add(time.Hour)
	plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d := outboxdriver.Delivery{ID: "dlv_" + ep.ID, Account: "acct", EventID: "evt_1", EventType: "t", EndpointID: ep.ID,
			Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
		if ep.ID == "ep_1" {
			d.LeaseUntil = &lease // leased as published
		}
		return d, nil, true
	}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "t",
		CreatedAt: now, Data: []byte(`{}`)}, Now: now, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: lease, Limit: 10, Token: "tok"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %+v %v", jobs, err)
	}
	leased := map[string]struct {
		d     outboxdriver.Delivery
		token string
	}{
		"dlv_ep_1": {pub.Deliveries[0], outboxdriver.PublishLeaseToken("dlv_ep_1")},
		"dlv_ep_2": {jobs[0].Delivery, "tok"},
	}
	for id, l := range leased {
		row, err := getDelivery(ctx, s.read(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got := normalizedLeased(l.d); !reflect.DeepEqual(got, row) {
			t.Errorf("%s: the leased delivery %+v\nreads as %+v", id, got, row)
		}
	}
	// The store decides on the delivery given while the token matches.
	seen := map[string]int{}
	decide := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		seen[d.ID] = d.Attempts
		nd := d
		nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, now
		return outboxdriver.Change{Delivery: &nd}, nil
	}
	marked := pub.Deliveries[0]
	marked.Attempts = 7 // a mark: the store took this copy
	stale := jobs[0].Delivery
	stale.Attempts = 9
	applied, err := s.Complete(ctx, []outboxdriver.Completion{
		{DeliveryID: "dlv_ep_1", Token: leased["dlv_ep_1"].token, Delivery: &marked, Decide: decide},
		{DeliveryID: "dlv_ep_2", Token: "other", Delivery: &stale, Decide: decide},
	})
	if err != nil || !applied[0] || applied[1] {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if seen["dlv_ep_1"] != 7 {
		t.Errorf("the matching lease was decided on %d attempts, want the given delivery's 7", seen["dlv_ep_1"])
	}
	if _, ok := seen["dlv_ep_2"]; ok {
		t.Errorf("a lease the row does not carry was decided")
	}
}
