package outboxtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func testUpdateDeliveryAndRecover(t *testing.T, s outboxdriver.Store) {
	var ids []string
	for i := range 3 {
		ds := publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Hour))
		ids = append(ids, ds[0].ID)
	}
	fail := func(id string) {
		t.Helper()
		if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: id, Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			if ep.ID != "ep_a" {
				t.Errorf("endpoint %s", ep.ID)
			}
			ch := attemptChange(d, t0, t0)
			ch.Delivery.Status = outboxdriver.DeliveryFailed
			return ch, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		fail(id)
	}
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "other", ID: ids[0], Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
		t.Error("decide called across accounts")
		return outboxdriver.Change{}, nil
	}}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("update across accounts: %v", err)
	}
	now := t0.Add(5 * time.Hour)
	n, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_a", Since: t0.Add(time.Hour), Now: now})
	if err != nil || n != 2 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	if d, _ := getDelivery(t, s, "acct", ids[0]); d.Status != outboxdriver.DeliveryFailed {
		t.Fatalf("delivery before since recovered: %s", d.Status)
	}
	d, _ := getDelivery(t, s, "acct", ids[2])
	if d.Status != outboxdriver.DeliveryPending || d.RunStart != d.Attempts || d.Attempts != 1 || !d.NextAttemptAt.Equal(now) {
		t.Fatalf("recovered delivery %+v", d)
	}
	if n, _ := s.Recover(ctx, outboxdriver.RecoverParams{Account: "other", EndpointID: "ep_a", Since: time.Time{}, Now: now}); n != 0 {
		t.Fatalf("recover across accounts touched %d", n)
	}
}

func testListings(t *testing.T, b Bundle) {
	s := b.Store
	a := endpoint("ep_a", "acct")
	mustCreate(t, s, a, endpoint("ep_b", "acct"), endpoint("ep_x", "other"))
	for i := range 5 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Minute))
	}
	publish(t, s, "other", "evt_o", t0)

	evs, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Limit: 2})
	if err != nil || len(evs) != 2 || evs[0].ID != "evt_0" || evs[1].ID != "evt_1" {
		t.Fatalf("events page 1: %+v %v", evs, err)
	}
	evs, _ = s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", AfterID: "evt_1", Limit: 10})
	if len(evs) != 3 || evs[0].ID != "evt_2" {
		t.Fatalf("events after evt_1: %+v", evs)
	}
	evs, _ = s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Since: t0.Add(3 * time.Minute), Type: "call.status", Limit: 10})
	if len(evs) != 2 || evs[0].ID != "evt_3" {
		t.Fatalf("events since: %+v", evs)
	}
	if evs, _ = s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Type: "other.type", Limit: 10}); len(evs) != 0 {
		t.Fatalf("type filter: %+v", evs)
	}

	ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", EndpointID: "ep_a", Limit: 3})
	if err != nil || len(ds) != 3 || ds[0].EventID != "evt_4" || ds[2].EventID != "evt_2" {
		t.Fatalf("deliveries newest first: %+v %v", ds, err)
	}
	next, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", EndpointID: "ep_a", BeforeID: ds[2].ID, Limit: 10})
	if len(next) != 2 || next[0].EventID != "evt_1" {
		t.Fatalf("deliveries page 2: %+v", next)
	}
	byEvent, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", EventID: "evt_0", Limit: 10})
	if len(byEvent) != 2 {
		t.Fatalf("deliveries of evt_0: %d", len(byEvent))
	}
	pending, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Status: outboxdriver.DeliveryFailed, Limit: 10})
	typed, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Type: "call.status", Limit: 100})
	if len(pending) != 0 || len(typed) != 10 {
		t.Fatalf("status filter %d, type filter %d", len(pending), len(typed))
	}
	if other, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "other", Limit: 100}); len(other) != 1 {
		t.Fatalf("other account sees %d deliveries", len(other))
	}
	if _, _, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "other", ID: ds[0].ID}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("delivery across accounts: %v", err)
	}
}

func testPurge(t *testing.T, s outboxdriver.Store) {
	for i := range 5 {
		publish(t, s, "acct", fmt.Sprintf("old_%d", i), t0)
	}
	recent := publish(t, s, "acct", "new", t0.Add(48*time.Hour))
	jobs := claim(t, s, t0, 1, "tok") // one old delivery in flight: kept
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: recent[0].ID, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return attemptChange(d, t0, t0), nil
	}}); err != nil {
		t.Fatal(err)
	}
	before := t0.Add(24 * time.Hour)
	d1, e1, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: before, Limit: 3})
	if err != nil || d1 != 3 {
		t.Fatalf("first batch: %d deliveries, %d events, %v", d1, e1, err)
	}
	d2, e2, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: before, Limit: 3})
	if err != nil || d2 != 1 || e1+e2 != 4 {
		t.Fatalf("second batch: %d deliveries, %d+%d events, %v", d2, e1, e2, err)
	}
	if _, _, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: jobs[0].Delivery.ID}); err != nil {
		t.Fatalf("leased delivery purged: %v", err)
	}
	if _, as := getDelivery(t, s, "acct", recent[0].ID); len(as) != 1 {
		t.Fatalf("recent attempts purged")
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: jobs[0].Event.ID}); err != nil {
		t.Fatalf("event of a kept delivery purged: %v", err)
	}
}
