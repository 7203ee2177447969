package outboxtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testListEventsCursor: ListEvents is oldest first by creation time whatever the order
// of publishing, and paging with AfterID visits every event once, even among events
// created at the same time; Since and Type hold on every page.
func testListEventsCursor(t *testing.T, s outboxdriver.Store) {
	// Creation offsets in seconds, in the order of publishing; ties on purpose.
	offsets := []int{5, 1, 3, 1, 0, 3, 5, 2, 1}
	for i, off := range offsets {
		ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%02d", 20-i), Account: "acct", Type: "call.status",
			CreatedAt: t0.Add(time.Duration(off) * time.Second), Data: []byte(`{}`)}
		if i%3 == 0 {
			ev.Type = "call.ended"
		}
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0.Add(time.Hour), Plan: planAll(ev, t0)}); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, s, "other", "evt_other", t0.Add(2*time.Second))
	walk := func(q outboxdriver.EventQuery) []outboxdriver.Event {
		t.Helper()
		return walkPages(t, q.Limit, func() ([]outboxdriver.Event, error) { return s.ListEvents(ctx, q) },
			func(last outboxdriver.Event) { q.AfterID = last.ID })
	}
	check := func(q outboxdriver.EventQuery, keep func(outboxdriver.Event) bool) {
		t.Helper()
		whole, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: q.Account, Since: q.Since, Type: q.Type, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i, off := range offsets {
			ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%02d", 20-i), CreatedAt: t0.Add(time.Duration(off) * time.Second), Type: "call.status"}
			if i%3 == 0 {
				ev.Type = "call.ended"
			}
			if keep(ev) {
				want++
			}
		}
		if len(whole) != want {
			t.Fatalf("%+v listed %v, want %d events", q, eventIDs(whole), want)
		}
		for i, ev := range whole {
			if ev.Account != "acct" || !keep(ev) || i > 0 && ev.CreatedAt.Before(whole[i-1].CreatedAt) {
				t.Fatalf("%+v listed %v: not oldest first, or not filtered", q, eventIDs(whole))
			}
		}
		for _, limit := range []int{1, 2, 4} {
			q.Limit = limit
			paged := walk(q)
			if !slices.Equal(eventIDs(paged), eventIDs(whole)) {
				t.Fatalf("%+v paged by %d: %v, want %v", q, limit, eventIDs(paged), eventIDs(whole))
			}
		}
	}
	check(outboxdriver.EventQuery{Account: "acct"}, func(outboxdriver.Event) bool { return true })
	since := t0.Add(time.Second)
	check(outboxdriver.EventQuery{Account: "acct", Since: since}, func(ev outboxdriver.Event) bool { return !ev.CreatedAt.Before(since) })
	check(outboxdriver.EventQuery{Account: "acct", Type: "call.status"}, func(ev outboxdriver.Event) bool { return ev.Type == "call.status" })
	check(outboxdriver.EventQuery{Account: "acct", Since: since, Type: "call.ended"}, func(ev outboxdriver.Event) bool {
		return ev.Type == "call.ended" && !ev.CreatedAt.Before(since)
	})
}

// testListDeliveriesCursor: ListDeliveries is newest first, by creation time and then
// by id descending (the order the cursor follows), and paging with BeforeID visits
// every delivery once, even among deliveries created at the same time (one event's
// fan-out); each filter, alone or with others and in every state, holds on every page.
func testListDeliveriesCursor(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"), endpoint("ep_c", "acct"))
	for i, off := range []int{2, 0, 1, 2, 1} {
		ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%d", i), Account: "acct", Type: "call.status",
			CreatedAt: t0, Data: []byte(`{}`)}
		if i == 2 {
			ev.Type = "call.ended"
		}
		due := t0.Add(time.Duration(off) * time.Minute)
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: due, Plan: planAll(ev, due)}); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string]outboxdriver.Delivery{}
	all, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Limit: 1000})
	if err != nil || len(all) != 15 {
		t.Fatalf("listed %d, %v", len(all), err)
	}
	for _, d := range all {
		byID[d.ID] = d
	}
	// Some finish: two FAILED on ep_a, one SUCCEEDED on ep_b, one DEAD and one
	// DROPPED on ep_c.
	n := 0
	for _, d := range all {
		switch {
		case d.EndpointID == "ep_a" && n < 2:
			byID[d.ID] = setStatus(t, s, "acct", d.ID, outboxdriver.DeliveryFailed, t0)
			n++
		case d.EndpointID == "ep_b" && d.EventID == "evt_3":
			byID[d.ID] = setStatus(t, s, "acct", d.ID, outboxdriver.DeliverySucceeded, t0)
		case d.EndpointID == "ep_c" && d.EventID == "evt_1":
			byID[d.ID] = setStatus(t, s, "acct", d.ID, outboxdriver.DeliveryDead, t0)
		case d.EndpointID == "ep_c" && d.EventID == "evt_4":
			byID[d.ID] = setStatus(t, s, "acct", d.ID, outboxdriver.DeliveryDropped, t0)
		}
	}
	publish(t, s, "other", "evt_x", t0)

	walk := func(q outboxdriver.DeliveryQuery) []outboxdriver.Delivery {
		t.Helper()
		return walkPages(t, q.Limit, func() ([]outboxdriver.Delivery, error) { return s.ListDeliveries(ctx, q) },
			func(last outboxdriver.Delivery) { q.BeforeID = last.ID })
	}
	for _, q := range []outboxdriver.DeliveryQuery{
		{Account: "acct"},
		{Account: "acct", EndpointID: "ep_a"},
		{Account: "acct", EventID: "evt_3"},
		{Account: "acct", Type: "call.ended"},
		{Account: "acct", Status: outboxdriver.DeliveryFailed},
		{Account: "acct", Status: outboxdriver.DeliverySucceeded},
		{Account: "acct", EndpointID: "ep_a", Status: outboxdriver.DeliveryPending},
		{Account: "acct", EndpointID: "ep_b", EventID: "evt_3", Status: outboxdriver.DeliverySucceeded},
		{Account: "acct", EndpointID: "ep_c", Type: "call.ended"},
		{Account: "acct", EndpointID: "ep_c"},
		{Account: "acct", EndpointID: "ep_c", Status: outboxdriver.DeliveryDead},
		{Account: "acct", EndpointID: "ep_c", Status: outboxdriver.DeliveryDropped},
		{Account: "acct", EndpointID: "ep_c", Status: outboxdriver.DeliveryPending, Type: "call.status"},
		{Account: "acct", EndpointID: "ep_a", Status: outboxdriver.DeliveryFailed},
		{Account: "acct", EndpointID: "ep_b", Status: outboxdriver.DeliverySucceeded},
		{Account: "acct", EndpointID: "ep_b", EventID: "evt_0"},
	} {
		var want []outboxdriver.Delivery
		for _, d := range byID {
			if (q.EndpointID == "" || d.EndpointID == q.EndpointID) && (q.EventID == "" || d.EventID == q.EventID) &&
				(q.Type == "" || d.EventType == q.Type) && (q.Status == "" || d.Status == q.Status) {
				want = append(want, d)
			}
		}
		slices.SortFunc(want, func(a, b outboxdriver.Delivery) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		q.Limit = 1000
		whole, err := s.ListDeliveries(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got := deliveryIDs(whole)
		if len(want) == 0 || !slices.Equal(got, deliveryIDs(want)) {
			t.Fatalf("%+v listed %v, want %v (newest first, then by id descending)", q, got, deliveryIDs(want))
		}
		for _, limit := range []int{1, 2, 4} {
			q.Limit = limit
			if paged := deliveryIDs(walk(q)); !slices.Equal(paged, got) {
				t.Fatalf("%+v paged by %d: %v, want %v", q, limit, paged, got)
			}
		}
	}
}

// testListDeliveriesWhileInserting: paging an endpoint's deliveries newest first
// while new ones arrive visits every delivery that was there when the listing began,
// once each, in order: the new ones are newer than the cursor, so they neither shift a
// page (duplicates) nor push a delivery past one (gaps).
func testListDeliveriesWhileInserting(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"))
	for i := range 12 {
		publish(t, s, "acct", fmt.Sprintf("evt_%02d", i), t0.Add(time.Duration(i/3)*time.Second))
	}
	q := outboxdriver.DeliveryQuery{Account: "acct", EndpointID: "ep_a", Limit: 1000}
	before, err := s.ListDeliveries(ctx, q)
	if err != nil || len(before) != 12 {
		t.Fatalf("listed %d, %v", len(before), err)
	}
	q.Limit = 5
	page := 0
	got := walkPages(t, q.Limit, func() ([]outboxdriver.Delivery, error) { return s.ListDeliveries(ctx, q) },
		func(last outboxdriver.Delivery) {
			q.BeforeID = last.ID
			if page > 10 {
				t.Fatal("paging does not end")
			}
			// Between pages, two events arrive: deliveries newer than every one listed.
			for k := range 2 {
				publish(t, s, "acct", fmt.Sprintf("evt_new_%d_%d", page, k), t0.Add(time.Hour+time.Duration(page)*time.Second))
			}
			page++
		})
	if !slices.Equal(deliveryIDs(got), deliveryIDs(before)) {
		t.Fatalf("paged while inserting: %v\nwant %v", deliveryIDs(got), deliveryIDs(before))
	}
}
