package outboxtest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testPublishPlan: plan is called once per endpoint of the account that is not
// removed, with its current state; ok false creates no delivery for that endpoint.
func testPublishPlan(t *testing.T, b Bundle) {
	s := b.Store
	disabled := endpoint("ep_d", "acct")
	disabled.Status = outboxdriver.EndpointDisabled
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_skip", "acct"), disabled)
	ev := outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
	seen := map[string]outboxdriver.EndpointStatus{}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		if _, twice := seen[ep.ID]; twice {
			t.Errorf("%s planned twice", ep.ID)
		}
		seen[ep.ID] = ep.Status
		d, _, _ := planAll(ev, t0)(ep)
		return d, nil, ep.ID == "ep_a"
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, map[string]outboxdriver.EndpointStatus{"ep_a": outboxdriver.EndpointActive,
		"ep_skip": outboxdriver.EndpointActive, "ep_d": outboxdriver.EndpointDisabled}) {
		t.Fatalf("plan saw %v", seen)
	}
	if len(pub.Deliveries) != 1 || pub.Deliveries[0].EndpointID != "ep_a" {
		t.Fatalf("published %+v, want ep_a's delivery only", pub.Deliveries)
	}
	ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Limit: 100})
	if err != nil || len(ds) != 1 || ds[0].ID != pub.Deliveries[0].ID {
		t.Fatalf("stored deliveries %v, %v", deliveryIDs(ds), err)
	}
	// Nothing planned: the event is stored all the same.
	ev2 := outboxdriver.Event{ID: "evt_2", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
	if pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev2, Now: t0, Plan: func(outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{}, nil, false
	}}); err != nil || len(pub.Deliveries) != 0 || pub.Duplicate {
		t.Fatalf("no delivery planned: %+v %v", pub, err)
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_2"}); err != nil {
		t.Fatalf("event without deliveries not stored: %v", err)
	}
}

// testPublishDuplicate: publishing an id again in the same account returns the stored
// event and its deliveries as they are now, with Duplicate set, and writes nothing,
// also inside a caller's transaction; other content fails with ErrConflict and
// writes nothing. (The same id in another account is another event:
// testEventIDsPerAccount.)
func testPublishDuplicate(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"), endpoint("ep_x", "other"))
	ev := outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{"n":1}`)}
	first, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: planAll(ev, t0)})
	if err != nil || len(first.Deliveries) != 2 {
		t.Fatalf("publish: %+v %v", first, err)
	}
	stored, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_1"})
	if err != nil {
		t.Fatal(err)
	}
	done := setStatus(t, s, "acct", first.Deliveries[0].ID, outboxdriver.DeliverySucceeded, t0.Add(time.Second))
	mustCreate(t, s, endpoint("ep_new", "acct")) // would get a delivery if planned
	acct, other := takeSnapshot(t, s, "acct"), takeSnapshot(t, s, "other")
	noPlan := func(outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		t.Error("a duplicate was planned")
		return outboxdriver.Delivery{}, nil, false
	}
	check := func(dup outboxdriver.Published, err error) {
		t.Helper()
		if err != nil || !dup.Duplicate || !reflect.DeepEqual(dup.Event, stored) {
			t.Fatalf("duplicate: %+v %v; want the stored event %+v", dup, err, stored)
		}
		want := map[string]outboxdriver.Delivery{}
		for _, d := range acct.Deliveries {
			if d.EventID == "evt_1" {
				want[d.ID] = d
			}
		}
		got := map[string]outboxdriver.Delivery{}
		for _, d := range dup.Deliveries {
			got[d.ID] = d
		}
		if !reflect.DeepEqual(got, want) || got[done.ID].Status != outboxdriver.DeliverySucceeded {
			t.Fatalf("duplicate's deliveries\n%+v\nwant them as stored\n%+v", got, want)
		}
	}
	check(s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0.Add(time.Hour), Plan: noPlan}))
	requireUnchanged(t, s, "acct", acct, "a duplicate publish")

	tx, err := b.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dup, err := s.Publish(ctx, outboxdriver.PublishParams{Tx: tx.Tx, Event: ev, Now: t0.Add(time.Hour), Plan: noPlan})
	if cerr := tx.Commit(); cerr != nil {
		t.Fatal(cerr)
	}
	check(dup, err)
	requireUnchanged(t, s, "acct", acct, "a duplicate publish in a caller's transaction")

	for _, bad := range []outboxdriver.Event{
		{ID: "evt_1", Account: "acct", Type: "call.ended", CreatedAt: t0, Data: ev.Data},
		{ID: "evt_1", Account: "acct", Type: ev.Type, CreatedAt: t0, Data: json.RawMessage(`{"n":2}`)},
	} {
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: bad, Now: t0, Plan: planAll(bad, t0)}); !errors.Is(err, outboxdriver.ErrConflict) {
			t.Fatalf("%+v: %v, want ErrConflict", bad, err)
		}
	}
	requireUnchanged(t, s, "acct", acct, "a conflicting publish")
	requireUnchanged(t, s, "other", other, "a conflicting publish")
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "other", ID: "evt_1"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("another account reads the event: %v", err)
	}
}

// testEventIDsPerAccount: event ids are unique per account (docs/outbox.md §1). The
// same id published in two accounts, with other content, is two events, each
// fanned out to its own account's endpoints only: neither publish is a duplicate or
// a conflict, so one account never learns that another used an id nor blocks it.
// Each account reads, lists, republishes (a duplicate) and conflicts on its own
// event; a claim carries each delivery's own event; a purge of one keeps the other.
func testEventIDsPerAccount(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "other"))
	evA := outboxdriver.Event{ID: "shared-id", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{"n":"a"}`)}
	evB := outboxdriver.Event{ID: "shared-id", Account: "other", Type: "other.type", CreatedAt: t0.Add(time.Second), Data: json.RawMessage(`{"n":"b"}`)}
	pubA, err := s.Publish(ctx, outboxdriver.PublishParams{Event: evA, Now: t0, Plan: planAll(evA, t0)})
	if err != nil || pubA.Duplicate || len(pubA.Deliveries) != 1 || pubA.Deliveries[0].EndpointID != "ep_a" {
		t.Fatalf("publish in acct: %+v %v", pubA, err)
	}
	// In a caller's transaction, as a program sharing the database would.
	tx, err := b.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pubB, err := s.Publish(ctx, outboxdriver.PublishParams{Tx: tx.Tx, Event: evB, Now: t0, Plan: planAll(evB, t0)})
	if cerr := tx.Commit(); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || pubB.Duplicate || len(pubB.Deliveries) != 1 || pubB.Deliveries[0].EndpointID != "ep_b" {
		t.Fatalf("the same id in another account: %+v %v, want a new event of its own", pubB, err)
	}
	for _, ev := range []outboxdriver.Event{evA, evB} {
		got, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: ev.Account, ID: ev.ID})
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Fatalf("%s reads %+v %v, want its own %+v", ev.Account, got, err, ev)
		}
		evs, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: ev.Account, Limit: 10})
		if err != nil || len(evs) != 1 || !reflect.DeepEqual(evs[0], ev) {
			t.Fatalf("%s lists %+v %v", ev.Account, evs, err)
		}
		ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: ev.Account, EventID: ev.ID, Limit: 10})
		if err != nil || len(ds) != 1 {
			t.Fatalf("%s's deliveries of %s: %+v %v", ev.Account, ev.ID, ds, err)
		}
		dup, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0.Add(time.Hour), Plan: planAll(ev, t0)})
		if err != nil || !dup.Duplicate || !reflect.DeepEqual(dup.Event, ev) || len(dup.Deliveries) != 1 || dup.Deliveries[0].ID != ds[0].ID {
			t.Fatalf("%s republishes: %+v %v, want its own duplicate", ev.Account, dup, err)
		}
		changed := ev
		changed.Data = json.RawMessage(`{"n":"changed"}`)
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: changed, Now: t0, Plan: planAll(changed, t0)}); !errors.Is(err, outboxdriver.ErrConflict) {
			t.Fatalf("%s: other content under its own id: %v", ev.Account, err)
		}
	}
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 2 {
		t.Fatalf("claimed %d, want both accounts' deliveries", len(jobs))
	}
	for _, j := range jobs {
		want := evA
		if j.Delivery.Account == "other" {
			want = evB
		}
		if !reflect.DeepEqual(j.Event, want) {
			t.Fatalf("the claim of %s's delivery carries %+v, want %+v", j.Delivery.Account, j.Event, want)
		}
	}
}

// testPublishLeaseRules: a publish lease is refused on a DISABLED endpoint; a hold
// counts at the time of storing (now), not at the event's CreatedAt; the leases of
// claims count against the cap, and so do those granted earlier in the same caller's
// transaction; a published lease answers only to PublishLeaseToken.
func testPublishLeaseRules(t *testing.T, b Bundle) {
	s := b.Store
	disabled := endpoint("ep_dis", "acct")
	disabled.Status, disabled.Events = outboxdriver.EndpointDisabled, []string{"d"}
	heldPast := endpoint("ep_held", "acct") // held until t0: over at the time of storing
	heldPast.HoldUntil, heldPast.Events = &t0, []string{"h"}
	capped := endpoint("ep_cap", "acct")
	capped.InFlightCap, capped.Events = 2, []string{"c"}
	mustCreate(t, s, disabled, heldPast, capped)
	leaseUntil := t0.Add(time.Minute)
	only := func(ep string) func(ev outboxdriver.Event) outboxdriver.PlanFunc {
		return func(ev outboxdriver.Event) outboxdriver.PlanFunc {
			return func(e outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
				d, a, ok := leasingPlan(ev, t0, leaseUntil)(e)
				return d, a, ok && e.ID == ep
			}
		}
	}
	if pub := publishWith(t, s, "acct", "evt_d", t0, t0, only("ep_dis")); pub.Deliveries[0].LeaseUntil != nil {
		t.Fatalf("a disabled endpoint's delivery leased: %+v", pub.Deliveries[0])
	}
	// Created while held, stored once the hold is over.
	pub := publishWith(t, s, "acct", "evt_h", t0.Add(-time.Minute), t0, only("ep_held"))
	if pub.Deliveries[0].LeaseUntil == nil {
		t.Fatalf("a delivery stored after the hold ended was not leased: %+v", pub.Deliveries[0])
	}
	// A claim's lease counts: one claimed, one more granted, then none.
	publishWith(t, s, "acct", "evt_c0", t0, t0, func(ev outboxdriver.Event) outboxdriver.PlanFunc {
		return func(e outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			d, a, ok := planAll(ev, t0)(e)
			return d, a, ok && e.ID == "ep_cap"
		}
	})
	if jobs := claim(t, s, t0, 10, "tok"); len(jobs) != 1 || jobs[0].Endpoint.ID != "ep_cap" {
		t.Fatalf("claimed %v", jobIDs(jobs))
	}
	tx, err := b.BeginTx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var granted []bool
	var inTx []outboxdriver.Delivery
	for _, id := range []string{"evt_c1", "evt_c2"} {
		ev := outboxdriver.Event{ID: id, Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{}`)}
		pub, err := s.Publish(ctx, outboxdriver.PublishParams{Tx: tx.Tx, Event: ev, Now: t0, Plan: only("ep_cap")(ev)})
		if err != nil {
			_ = tx.Rollback()
			t.Fatal(err)
		}
		granted = append(granted, pub.Deliveries[0].LeaseUntil != nil)
		inTx = append(inTx, pub.Deliveries[0])
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(granted, []bool{true, false}) {
		t.Fatalf("leases granted in one transaction under cap 2 with one claimed: %v, want [true false]", granted)
	}
	for i, d := range inTx {
		stored, _ := getDelivery(t, s, "acct", d.ID)
		if (stored.LeaseUntil != nil) != granted[i] {
			t.Fatalf("stored %+v, published %+v", stored, d)
		}
	}
	// The published lease answers to its publish token only.
	leased := inTx[0].ID
	for _, c := range []struct {
		token string
		want  bool
	}{{"tok", false}, {"", false}, {outboxdriver.PublishLeaseToken(leased), true}} {
		applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: leased, Token: c.token,
			Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
				ch := attemptChange(d, t0, t0)
				ch.Delivery.Status = outboxdriver.DeliverySucceeded
				return ch, nil
			}}})
		if err != nil || len(applied) != 1 || applied[0] != c.want {
			t.Fatalf("completing the publish lease with token %q: %v %v, want %v", c.token, applied, err, c.want)
		}
	}
}
