package outboxtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testPurgeScope: Purge deletes deliveries created strictly before before, whatever
// their status, with their attempts; it deletes at most limit events per call, counts
// an event's age from its storing (Publish's now), not from its CreatedAt, and keeps an
// event while a delivery refers to it.
func testPurgeScope(t *testing.T, s outboxdriver.Store) {
	before := t0.Add(24 * time.Hour)

	// A delivery of each finished status and one PENDING, all created before before,
	// each with an attempt.
	var old []outboxdriver.Delivery
	for i, st := range []outboxdriver.DeliveryStatus{outboxdriver.DeliveryFailed, outboxdriver.DeliverySucceeded, outboxdriver.DeliveryDead,
		outboxdriver.DeliveryDropped, outboxdriver.DeliveryPending} {
		d := publish(t, s, "acct", fmt.Sprintf("evt_old_%d", i), t0)[0]
		old = append(old, setStatus(t, s, "acct", d.ID, st, t0))
	}
	// Created exactly at before: kept.
	edge := publish(t, s, "acct", "evt_edge", before)[0]
	// Events without deliveries (no endpoint of theirs): two old, one stored late though
	// created long ago (a publisher's CreatedAt).
	for i := range 2 {
		publishWith(t, s, "quiet", fmt.Sprintf("evt_q%d", i), t0, t0, func(ev outboxdriver.Event) outboxdriver.PlanFunc { return planAll(ev, t0) })
	}
	publishWith(t, s, "quiet", "evt_late", t0.Add(-30*24*time.Hour), before, func(ev outboxdriver.Event) outboxdriver.PlanFunc {
		return planAll(ev, before)
	})

	d, e, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: before, Limit: 1})
	if err != nil || d != 1 || e != 1 {
		t.Fatalf("limit 1: %d deliveries, %d events, %v", d, e, err)
	}
	td, te := d, e
	for range 20 {
		d, e, err = s.Purge(ctx, outboxdriver.PurgeParams{Before: before, Limit: 1})
		if err != nil || d > 1 || e > 1 {
			t.Fatalf("limit 1: %d deliveries, %d events, %v", d, e, err)
		}
		if d == 0 && e == 0 {
			break
		}
		td, te = td+d, te+e
	}
	// 5 deliveries; their 5 events and the 2 quiet old ones.
	if td != 5 || te != 7 {
		t.Fatalf("purged %d deliveries and %d events, want 5 and 7", td, te)
	}
	for _, d := range old {
		if _, _, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: d.ID}); !errors.Is(err, outboxdriver.ErrNotFound) {
			t.Fatalf("%s delivery kept: %v", d.Status, err)
		}
	}
	if _, _, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: edge.ID}); err != nil {
		t.Fatalf("delivery created at before purged: %v", err)
	}
	for _, id := range []string{"evt_edge"} {
		if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: id}); err != nil {
			t.Fatalf("event %s purged: %v", id, err)
		}
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "quiet", ID: "evt_late"}); err != nil {
		t.Fatalf("an event stored at before purged by its CreatedAt: %v", err)
	}
	// The attempts went with their delivery: a delivery stored again under the same id
	// has none.
	ev := outboxdriver.Event{ID: "evt_again", Account: "acct", Type: "call.status", CreatedAt: before, Data: []byte(`{}`)}
	if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: before, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d, _, ok := planAll(ev, before)(ep)
		d.ID = old[0].ID
		return d, nil, ok
	}}); err != nil {
		t.Fatal(err)
	}
	if _, as := getDelivery(t, s, "acct", old[0].ID); len(as) != 0 {
		t.Fatalf("attempts of a purged delivery kept: %+v", as)
	}
}
