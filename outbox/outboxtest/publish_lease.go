package outboxtest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// leasingPlan is planAll asking for every delivery to be leased until leaseUntil.
func leasingPlan(ev outboxdriver.Event, due, leaseUntil time.Time) outboxdriver.PlanFunc {
	base := planAll(ev, due)
	return func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d, a, ok := base(ep)
		d.LeaseUntil = &leaseUntil
		return d, a, ok
	}
}

// testPublishLease: a delivery planned with LeaseUntil is stored leased, with the token
// PublishLeaseToken, when its endpoint can take it (ACTIVE, not held, under its cap
// counting its leases), and otherwise stored unleased and claimable later.
func testPublishLease(t *testing.T, b Bundle) {
	s := b.Store
	open := endpoint("ep_open", "acct")
	open.InFlightCap = 2
	held := endpoint("ep_held", "acct")
	holdUntil := t0.Add(time.Hour)
	held.HoldUntil = &holdUntil
	paused := endpoint("ep_paused", "acct")
	paused.Status = outboxdriver.EndpointPaused
	mustCreate(t, s, open, held, paused)
	leaseUntil := t0.Add(time.Minute)

	publishLeasing := func(id string) map[string]outboxdriver.Delivery {
		t.Helper()
		ev := outboxdriver.Event{ID: id, Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
		pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: leasingPlan(ev, t0, leaseUntil)})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]outboxdriver.Delivery{}
		for _, d := range pub.Deliveries {
			out[d.EndpointID] = d
		}
		return out
	}
	first := publishLeasing("evt_1")
	if d := first["ep_open"]; d.LeaseUntil == nil || !d.LeaseUntil.Equal(leaseUntil) {
		t.Fatalf("open endpoint: %+v, want leased until %v", d, leaseUntil)
	}
	for _, ep := range []string{"ep_held", "ep_paused"} {
		if d := first[ep]; d.LeaseUntil != nil {
			t.Fatalf("%s: leased %+v, want stored unleased", ep, d)
		}
	}
	if stored, _ := getDelivery(t, s, "acct", first["ep_open"].ID); stored.LeaseUntil == nil {
		t.Fatalf("the lease granted was not stored: %+v", stored)
	}
	second, third := publishLeasing("evt_2"), publishLeasing("evt_3")
	if second["ep_open"].LeaseUntil == nil || third["ep_open"].LeaseUntil != nil {
		t.Fatalf("cap 2: second %+v, third %+v; want the second leased, the third not", second["ep_open"], third["ep_open"])
	}
	// Both of the open endpoint's leases are taken: nothing is claimable yet.
	if jobs := claim(t, s, t0.Add(time.Second), 10, "tok_a"); len(jobs) != 0 {
		t.Fatalf("claimed %d while the endpoint is at its cap", len(jobs))
	}
	// A published lease completes with its token like a claimed one, and frees a slot.
	done := outboxdriver.Completion{DeliveryID: first["ep_open"].ID, Token: outboxdriver.PublishLeaseToken(first["ep_open"].ID),
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			nd := d
			nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, t0
			return outboxdriver.Change{At: t0, Delivery: &nd}, nil
		}}
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{done}); err != nil || len(applied) != 1 || !applied[0] {
		t.Fatalf("complete with the publish token: %v %v", applied, err)
	}
	jobs := claim(t, s, t0.Add(time.Second), 10, "tok_b")
	if len(jobs) != 1 || jobs[0].Delivery.ID != third["ep_open"].ID {
		t.Fatalf("claimed %+v, want the third event's delivery to the open endpoint", jobs)
	}
}

// testPublishLeaseConcurrent: publishes written together still grant no more leases
// than the endpoint's cap. A store may grant fewer: one that never makes a publish
// wait (pgstore's lease skips an endpoint row another publish's lease holds until it
// commits) stores the rest unleased, so how many are granted depends on how the
// publishes overlap. Whatever it granted, the room left under the cap is claimable,
// and no more.
func testPublishLeaseConcurrent(t *testing.T, b Bundle) {
	s := b.Store
	ep := endpoint("ep_c", "acct")
	ep.InFlightCap = 3
	mustCreate(t, s, ep)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		leased int
	)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := outboxdriver.Event{ID: fmt.Sprintf("evt_c%d", i), Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
			pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: leasingPlan(ev, t0, t0.Add(time.Minute))})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, d := range pub.Deliveries {
				if d.LeaseUntil != nil {
					leased++
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	// The first publish to reach the endpoint finds its row free and under the cap.
	if leased < 1 || leased > ep.InFlightCap {
		t.Fatalf("%d leases granted to 20 concurrent publishes, want 1 to the cap %d", leased, ep.InFlightCap)
	}
	if jobs := claim(t, s, t0.Add(time.Second), 50, "tok"); leased+len(jobs) != ep.InFlightCap {
		t.Fatalf("%d leases granted, then %d claimed: want the cap %d in flight", leased, len(jobs), ep.InFlightCap)
	}
}
