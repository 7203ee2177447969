package outboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testNotFound: every method that takes the id of an endpoint, event or delivery fails
// with ErrNotFound for a missing one, and for an endpoint that was removed, without
// calling the caller's decision.
func testNotFound(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_r", "acct"))
	publish(t, s, "acct", "evt_1", t0)
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_r", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.RemovedAt = &t0
		return outboxdriver.Change{At: t0, Endpoint: &ep}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	before := takeSnapshot(t, s, "acct")
	for _, id := range []string{"nope", "ep_r"} {
		if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: id, Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			t.Errorf("UpdateEndpoint(%s) called its change", id)
			return outboxdriver.Change{Endpoint: &ep}, nil
		}}); !errors.Is(err, outboxdriver.ErrNotFound) {
			t.Fatalf("UpdateEndpoint(%s): %v, want ErrNotFound", id, err)
		}
	}
	if eps, err := s.ListEndpoints(ctx, "acct"); err != nil || len(eps) != 1 || eps[0].ID != "ep_a" {
		t.Fatalf("ListEndpoints lists a removed endpoint: %+v %v", eps, err)
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "nope"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("GetEvent(missing): %v", err)
	}
	if _, _, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: "nope"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("GetDelivery(missing): %v", err)
	}
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: "nope", Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
		t.Error("UpdateDelivery(missing) decided")
		return outboxdriver.Change{}, nil
	}}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("UpdateDelivery(missing): %v", err)
	}
	requireUnchanged(t, s, "acct", before, "calls on missing ids")
}

// testRecoverNotFound: Recover takes an endpoint id, so a missing endpoint, a removed
// one and another account's fail with ErrNotFound (Store: "Every method returns an
// error wrapping ErrNotFound for a missing or removed row") and change nothing.
func testRecoverNotFound(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_x", "other"))
	ds := publish(t, s, "acct", "evt_1", t0)
	setStatus(t, s, "acct", ds[0].ID, outboxdriver.DeliveryFailed, t0)
	xs := publish(t, s, "other", "evt_x", t0)
	setStatus(t, s, "other", xs[0].ID, outboxdriver.DeliveryFailed, t0)
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.RemovedAt = &t0
		return outboxdriver.Change{At: t0, Endpoint: &ep}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	acct, other := takeSnapshot(t, s, "acct"), takeSnapshot(t, s, "other")
	for _, c := range []struct{ account, endpoint, what string }{
		{"acct", "nope", "a missing endpoint"},
		{"acct", "ep_a", "a removed endpoint"},
		{"acct", "ep_x", "another account's endpoint"},
	} {
		n, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: c.account, EndpointID: c.endpoint, Since: time.Time{}, Now: t0.Add(time.Hour)})
		if !errors.Is(err, outboxdriver.ErrNotFound) {
			t.Errorf("Recover on %s: %d, %v; want ErrNotFound", c.what, n, err)
		}
	}
	requireUnchanged(t, s, "acct", acct, "Recover on ids it cannot see")
	requireUnchanged(t, s, "other", other, "Recover on ids it cannot see")
	if d, _ := getDelivery(t, s, "acct", ds[0].ID); d.Status != outboxdriver.DeliveryFailed {
		t.Fatalf("Recover on a removed endpoint made its delivery %s", d.Status)
	}
}

// testAccountIsolation: no listing shows, and no cursor or filter reaches, another
// account's rows.
func testAccountIsolation(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_x", "other"))
	publish(t, s, "acct", "evt_a1", t0)
	publish(t, s, "acct", "evt_a2", t0.Add(2*time.Minute))
	xs := publish(t, s, "other", "evt_x", t0.Add(time.Minute))
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "other", ID: "ep_x", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return outboxdriver.Change{At: t0, Audit: []outboxdriver.AuditEntry{{Account: "other", EndpointID: "ep_x",
			Action: outboxdriver.AuditPaused, At: t0}}}, nil
	}}); err != nil {
		t.Fatal(err)
	}

	if eps, err := s.ListEndpoints(ctx, "acct"); err != nil || len(eps) != 1 || eps[0].ID != "ep_a" {
		t.Fatalf("endpoints of acct: %+v %v", eps, err)
	}
	evs, err := s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", Limit: 100})
	if err != nil || !jsonIDs(eventIDs(evs), "evt_a1", "evt_a2") {
		t.Fatalf("events of acct: %v %v", eventIDs(evs), err)
	}
	evs, err = s.ListEvents(ctx, outboxdriver.EventQuery{Account: "acct", AfterID: "evt_x", Limit: 100})
	if !notFoundOrEmpty(len(evs), err) {
		t.Fatalf("events after another account's event: %v %v", eventIDs(evs), err)
	}
	ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Limit: 100})
	if err != nil || len(ds) != 2 {
		t.Fatalf("deliveries of acct: %v %v", deliveryIDs(ds), err)
	}
	for _, q := range []outboxdriver.DeliveryQuery{
		{Account: "acct", EndpointID: "ep_x", Limit: 100},
		{Account: "acct", EventID: "evt_x", Limit: 100},
		{Account: "acct", BeforeID: xs[0].ID, Limit: 100},
	} {
		ds, err := s.ListDeliveries(ctx, q)
		if !notFoundOrEmpty(len(ds), err) {
			t.Fatalf("deliveries %+v reached another account's: %v %v", q, deliveryIDs(ds), err)
		}
	}
	audit, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 100})
	if err != nil || len(audit) != 1 || audit[0].EndpointID != "ep_a" {
		t.Fatalf("audit of acct: %+v %v", audit, err)
	}
	if audit, _ := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "other", Limit: 100}); len(audit) != 2 || audit[0].Action != outboxdriver.AuditPaused {
		t.Fatalf("audit of other: %+v", audit)
	}
}

func jsonIDs(got []string, want ...string) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

// testNothingChangedOnError: a write method that returns an error leaves every row as
// it was: the failed decision's endpoint change, waiting deliveries, attempt and audit
// entries included.
func testNothingChangedOnError(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_x", "other"))
	ds := publish(t, s, "acct", "evt_1", t0)
	publish(t, s, "acct", "evt_2", t0)
	acct, other := takeSnapshot(t, s, "acct"), takeSnapshot(t, s, "other")
	same := func(what string) {
		t.Helper()
		requireUnchanged(t, s, "acct", acct, what)
		requireUnchanged(t, s, "other", other, what)
	}

	// An endpoint id taken in another account.
	if err := s.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: endpoint("ep_a", "other"), Audit: outboxdriver.AuditEntry{Account: "other", EndpointID: "ep_a",
		Action: outboxdriver.AuditCreated, At: t0}}); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("CreateEndpoint with another account's id: %v", err)
	}
	same("a conflicting CreateEndpoint")

	// Everything a Change can write, refused by its decision.
	full := func(ep outboxdriver.Endpoint, d *outboxdriver.Delivery) outboxdriver.Change {
		ne := ep
		ne.Status, ne.DisabledAt, ne.URL = outboxdriver.EndpointDisabled, &t0, "https://changed.example"
		ch := outboxdriver.Change{At: t0, Endpoint: &ne, Waiting: outboxdriver.DeliveryDropped, WaitingReason: "disabled",
			Audit: []outboxdriver.AuditEntry{{Account: ep.Account, EndpointID: ep.ID, Action: outboxdriver.AuditDisabled, At: t0}}}
		if d != nil {
			c := attemptChange(*d, t0, t0)
			ch.Delivery, ch.Attempt = c.Delivery, c.Attempt
		}
		return ch
	}
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return full(ep, nil), errDecide
	}}); !errors.Is(err, errDecide) {
		t.Fatalf("UpdateEndpoint: %v", err)
	}
	same("a refused UpdateEndpoint")
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: ds[0].ID, Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return full(ep, &d), errDecide
	}}); !errors.Is(err, errDecide) {
		t.Fatalf("UpdateDelivery: %v", err)
	}
	same("a refused UpdateDelivery")

	// Publish of an id with other content.
	for _, ev := range []outboxdriver.Event{
		{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0, Data: json.RawMessage(`{"n":2}`)},
	} {
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: planAll(ev, t0)}); !errors.Is(err, outboxdriver.ErrConflict) {
			t.Fatalf("Publish %s in %s: %v", ev.ID, ev.Account, err)
		}
		same("a conflicting Publish")
	}

	// Reap whose decision fails: the lease stays for the next pass.
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 2 {
		t.Fatalf("claimed %d", len(jobs))
	}
	acct = takeSnapshot(t, s, "acct")
	calls := 0
	if _, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(time.Hour), Limit: 10, Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		calls++
		if calls == 1 {
			return full(ep, &d), nil
		}
		return outboxdriver.Change{}, errDecide
	}}); !errors.Is(err, errDecide) {
		t.Fatalf("Reap: %v", err)
	}
	same("a failed Reap")
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(time.Hour), Limit: 10, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return attemptChange(d, t0.Add(time.Hour), t0.Add(time.Hour)), nil
	}}); n != 2 || err != nil {
		t.Fatalf("Reap after a failed pass: %d %v", n, err)
	}
}

// testCanceledContext: a write called with a context already canceled may fail (a
// store need not), and when it does it has changed nothing.
func testCanceledContext(t *testing.T, s outboxdriver.Store) {
	ds := publish(t, s, "acct", "evt_1", t0)
	publish(t, s, "acct", "evt_2", t0)
	done, cancel := context.WithCancel(ctx)
	cancel()
	fail := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ch := attemptChange(d, t0, t0)
		ch.Delivery.Status = outboxdriver.DeliveryFailed
		return ch, nil
	}
	writes := []struct {
		name string
		call func() error
	}{
		{"CreateEndpoint", func() error {
			return s.CreateEndpoint(done, outboxdriver.CreateEndpointParams{Endpoint: endpoint("ep_new", "acct"), Audit: outboxdriver.AuditEntry{Account: "acct",
				EndpointID: "ep_new", Action: outboxdriver.AuditCreated, At: t0}})
		}},
		{"UpdateEndpoint", func() error {
			_, err := s.UpdateEndpoint(done, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
				ep.URL = "https://changed.example"
				return outboxdriver.Change{At: t0, Endpoint: &ep}, nil
			}})
			return err
		}},
		{"Publish", func() error {
			ev := outboxdriver.Event{ID: "evt_new", Account: "acct", Type: "x", CreatedAt: t0, Data: json.RawMessage(`{}`)}
			_, err := s.Publish(done, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: planAll(ev, t0)})
			return err
		}},
		{"Claim", func() error {
			_, err := s.Claim(done, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Minute), Limit: 10, Token: "tok"})
			return err
		}},
		{"UpdateDelivery", func() error {
			_, err := s.UpdateDelivery(done, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: ds[0].ID, Decide: fail})
			return err
		}},
		{"Recover", func() error {
			_, err := s.Recover(done, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_a", Since: time.Time{}, Now: t0})
			return err
		}},
		{"Purge", func() error {
			_, _, err := s.Purge(done, outboxdriver.PurgeParams{Before: t0.Add(time.Hour), Limit: 10})
			return err
		}},
	}
	for _, w := range writes {
		before := takeSnapshot(t, s, "acct")
		if err := w.call(); err != nil {
			requireUnchanged(t, s, "acct", before, w.name+" with a canceled context, which failed,")
		}
	}
}
