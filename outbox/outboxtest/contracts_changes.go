package outboxtest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testEndpointChange: Change.Endpoint replaces every mutable field of the endpoint
// (URL, events, API version, secrets, profile, overrides, managed, status, health and
// InFlightCap), clearing what it sets to nil, and keeps its account and creation
// time; UpdateEndpoint returns what a read returns. ListEndpoints is oldest first.
func testEndpointChange(t *testing.T, b Bundle) {
	s := b.Store
	older, newer := endpoint("ep_z", "acct"), endpoint("ep_a", "acct")
	older.CreatedAt, newer.CreatedAt = t0.Add(-time.Hour), t0
	mustCreate(t, s, newer, older) // created out of order
	if eps, err := s.ListEndpoints(ctx, "acct"); err != nil || len(eps) != 2 || eps[0].ID != "ep_z" || eps[1].ID != "ep_a" {
		t.Fatalf("ListEndpoints not oldest first: %+v %v", eps, err)
	}

	at := t0.Add(time.Minute)
	held, exp := at.Add(time.Hour), at.Add(24*time.Hour)
	want := newer
	want.URL, want.Events, want.APIVersion = "https://changed.example/hook", []string{"call.status", "call.ended"}, "v2"
	want.Secrets = []outboxdriver.Secret{{Key: "whsk_bmV3IGtleQ"}, {Key: newer.Secrets[0].Key, ExpiresAt: &exp}}
	want.Profile, want.Overrides, want.Managed = "lucibook", outboxdriver.Overrides{Jitter: ptr(0.5)}, true
	want.Status, want.Failures, want.FailingSince, want.LastDeliveryAt = outboxdriver.EndpointPaused, 4, &at, &at
	want.PausedAt, want.PauseReason, want.DisabledAt, want.HoldUntil = &at, outboxdriver.ReasonNetwork, &at, &held
	want.InFlightCap = 7
	got, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ne := want
		ne.Account, ne.CreatedAt = "other", t0.Add(time.Hour) // not the change's to set
		return outboxdriver.Change{At: at, Endpoint: &ne}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	read, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read, want) {
		t.Fatalf("after a change of every field:\n got %+v\nwant %+v", read, want)
	}
	if !reflect.DeepEqual(got, read) {
		t.Fatalf("UpdateEndpoint returned\n%+v\nbut a read gives\n%+v", got, read)
	}
	// Back to healthy: the times set to nil are cleared.
	want.Status, want.Failures, want.PauseReason = outboxdriver.EndpointActive, 0, ""
	want.FailingSince, want.PausedAt, want.DisabledAt, want.HoldUntil = nil, nil, nil, nil
	want.Secrets = want.Secrets[:1]
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ne := want
		return outboxdriver.Change{At: at, Endpoint: &ne}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if read, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"}); !reflect.DeepEqual(read, want) {
		t.Fatalf("after clearing:\n got %+v\nwant %+v", read, want)
	}
	// A Change without an endpoint leaves it alone.
	if got, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return outboxdriver.Change{At: at}, nil
	}}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("an empty change: %+v %v", got, err)
	}
	if other, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_z"}); !reflect.DeepEqual(other, older) {
		t.Fatalf("another endpoint changed: %+v", other)
	}
}

// testDeliveryChange: Change.Delivery replaces the delivery's mutable fields (status,
// attempts, run start, next attempt, fault since, last error) and clears its lease;
// the rest is kept. Change.Endpoint and Change.Audit apply with it. GetDelivery lists
// the attempts oldest first.
func testDeliveryChange(t *testing.T, s outboxdriver.Store) {
	orig := publish(t, s, "acct", "evt_1", t0)[0]
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at, next, fault := t0.Add(time.Minute), t0.Add(time.Hour), t0.Add(30*time.Second)
	var want outboxdriver.Delivery
	got, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: orig.ID, Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		if d.LeaseUntil == nil {
			t.Errorf("the decision saw no lease on a claimed delivery: %+v", d)
		}
		want = d
		want.Status, want.Attempts, want.RunStart, want.NextAttemptAt = outboxdriver.DeliveryPending, 3, 2, next
		want.FaultSince, want.LastError, want.UpdatedAt, want.LeaseUntil = &fault, "store unavailable", at, nil
		nd := want
		// Not the change's to set.
		nd.Account, nd.EventID, nd.EventType, nd.EndpointID, nd.CreatedAt = "other", "evt_x", "x.y", "ep_x", at
		nd.LeaseUntil = &next
		ne := ep
		ne.Failures = 9
		return outboxdriver.Change{At: at, Delivery: &nd, Endpoint: &ne,
			Audit: []outboxdriver.AuditEntry{{Account: "acct", EndpointID: "ep_a", Action: outboxdriver.AuditResumed, Reason: "retry", At: at}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	read, as := getDelivery(t, s, "acct", orig.ID)
	if !reflect.DeepEqual(read, want) || len(as) != 0 {
		t.Fatalf("after the change:\n got %+v\nwant %+v (attempts %+v)", read, want, as)
	}
	if !reflect.DeepEqual(got, read) {
		t.Fatalf("UpdateDelivery returned\n%+v\nbut a read gives\n%+v", got, read)
	}
	if ep, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"}); ep.Failures != 9 {
		t.Fatalf("the change's endpoint not written: %+v", ep)
	}
	if audit, _ := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 1}); len(audit) != 1 || audit[0].Action != outboxdriver.AuditResumed ||
		audit[0].Reason != "retry" || !audit[0].At.Equal(at) || audit[0].EndpointID != "ep_a" {
		t.Fatalf("the change's audit entry: %+v", audit)
	}
	// The lease the change cleared is lost: its completion is skipped.
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: orig.ID, Token: "tok",
		Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
			t.Error("a cleared lease was completed")
			return outboxdriver.Change{}, nil
		}}}); err != nil || len(applied) != 1 || applied[0] {
		t.Fatalf("completion after the lease was cleared: %v %v", applied, err)
	}
	// Attempts come back oldest first whatever order they were written in.
	for _, n := range []int{2, 0, 1} {
		if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: orig.ID, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			a := outboxdriver.Attempt{DeliveryID: d.ID, Number: n, At: t0.Add(time.Duration(n) * time.Minute),
				ScheduledAt: t0, Status: 500, Class: outboxdriver.ClassHTTP5xx}
			return outboxdriver.Change{At: at, Attempt: &a}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, as := getDelivery(t, s, "acct", orig.ID); len(as) != 3 || as[0].Number != 0 || as[1].Number != 1 || as[2].Number != 2 {
		t.Fatalf("attempts not oldest first: %+v", as)
	}
}

// testChangeAt: the delivery a Change rewrites takes Delivery.UpdatedAt, the time the
// decision gives it, whatever Change.At (the updated time of the waiting deliveries
// it moves, see testWaitingScope).
func testChangeAt(t *testing.T, s outboxdriver.Store) {
	ds := publish(t, s, "acct", "evt_1", t0)
	decided, at := t0.Add(time.Minute), t0.Add(time.Hour)
	d, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: ds[0].ID, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		nd := d
		nd.Status, nd.UpdatedAt = outboxdriver.DeliveryFailed, decided
		return outboxdriver.Change{At: at, Delivery: &nd}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := getDelivery(t, s, "acct", ds[0].ID); !d.UpdatedAt.Equal(decided) || !got.UpdatedAt.Equal(decided) {
		t.Fatalf("delivery updated at %v (read back %v), want the decision's %v", d.UpdatedAt, got.UpdatedAt, decided)
	}
}

// testWaitingScope: Change.Waiting moves only the other unleased PENDING deliveries of
// the changed endpoint, with WaitingReason as their last error and At as their
// updated time: not the endpoint's leased or finished deliveries, and nothing of
// another endpoint.
func testWaitingScope(t *testing.T, b Bundle) {
	s := b.Store
	a, other := endpoint("ep_a", "acct"), endpoint("ep_b", "acct")
	mustCreate(t, s, a, other)
	ev1 := publish(t, s, "acct", "evt_1", t0)                // both endpoints
	ev2 := publish(t, s, "acct", "evt_2", t0.Add(time.Hour)) // both endpoints, not due
	ev3 := publish(t, s, "acct", "evt_3", t0.Add(time.Hour))
	byEP := func(ds []outboxdriver.Delivery, ep string) outboxdriver.Delivery {
		for _, d := range ds {
			if d.EndpointID == ep {
				return d
			}
		}
		t.Fatalf("no delivery to %s", ep)
		return outboxdriver.Delivery{}
	}
	leased := claim(t, s, t0, 10, "tok") // evt_1 to both
	if len(leased) != 2 {
		t.Fatalf("claimed %d", len(leased))
	}
	succeeded := setStatus(t, s, "acct", byEP(ev3, "ep_a").ID, outboxdriver.DeliverySucceeded, t0)
	waiting, otherWaiting := byEP(ev2, "ep_a"), byEP(ev2, "ep_b")

	at := t0.Add(2 * time.Minute)
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.Status, ep.DisabledAt = outboxdriver.EndpointDisabled, &at
		return outboxdriver.Change{At: at, Endpoint: &ep, Waiting: outboxdriver.DeliveryDropped, WaitingReason: "endpoint disabled"}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := getDelivery(t, s, "acct", waiting.ID); d.Status != outboxdriver.DeliveryDropped || d.LastError != "endpoint disabled" ||
		!d.UpdatedAt.Equal(at) {
		t.Fatalf("waiting delivery: %+v", d)
	}
	if d, _ := getDelivery(t, s, "acct", byEP(ev1, "ep_a").ID); d.Status != outboxdriver.DeliveryPending || d.LeaseUntil == nil {
		t.Fatalf("leased delivery moved: %+v", d)
	}
	if d, _ := getDelivery(t, s, "acct", succeeded.ID); !reflect.DeepEqual(d, succeeded) {
		t.Fatalf("finished delivery moved:\n got %+v\nwant %+v", d, succeeded)
	}
	for _, id := range []string{otherWaiting.ID, byEP(ev3, "ep_b").ID, byEP(ev1, "ep_b").ID} {
		if d, _ := getDelivery(t, s, "acct", id); d.Status != outboxdriver.DeliveryPending || d.LastError != "" {
			t.Fatalf("another endpoint's delivery moved: %+v", d)
		}
	}
}

// testAuditLog: every writer's audit entries are appended and ListAudit returns the
// account's newest first, at most limit of them, as they were written.
func testAuditLog(t *testing.T, s outboxdriver.Store) {
	// The fixture's endpoint.created entry is at t0.
	entry := func(action, reason string, at time.Time) []outboxdriver.AuditEntry {
		return []outboxdriver.AuditEntry{{Account: "acct", EndpointID: "ep_a", Action: action, Reason: reason, At: at}}
	}
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return outboxdriver.Change{At: t0.Add(1 * time.Minute), Audit: entry(outboxdriver.AuditRotated, "", t0.Add(1*time.Minute))}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	publish(t, s, "acct", "evt_1", t0)
	publish(t, s, "acct", "evt_2", t0)
	jobs := claim(t, s, t0, 1, "tok")
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	if _, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: jobs[0].Delivery.ID, Token: "tok",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			at := t0.Add(2 * time.Minute)
			ch := attemptChange(d, at, at)
			ch.Audit = entry(outboxdriver.AuditPaused, outboxdriver.Reason5xx, at)
			return ch, nil
		}}}); err != nil {
		t.Fatal(err)
	}
	other := claim(t, s, t0, 1, "tok2")
	if len(other) != 1 {
		t.Fatalf("claimed %d", len(other))
	}
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(time.Hour), Limit: 10, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		at := t0.Add(3 * time.Minute)
		ch := attemptChange(d, at, at)
		ch.Audit = entry(outboxdriver.AuditDisabled, "", at)
		return ch, nil
	}}); n != 1 || err != nil {
		t.Fatalf("reaped %d, %v", n, err)
	}
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: jobs[0].Delivery.ID, Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
		at := t0.Add(4 * time.Minute)
		return outboxdriver.Change{At: at, Audit: append(entry(outboxdriver.AuditResumed, outboxdriver.ReasonManual, at),
			entry(outboxdriver.AuditRemoved, "", at.Add(time.Second))...)}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	all, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	wantActions := []string{outboxdriver.AuditRemoved, outboxdriver.AuditResumed, outboxdriver.AuditDisabled, outboxdriver.AuditPaused,
		outboxdriver.AuditRotated, outboxdriver.AuditCreated}
	if len(all) != len(wantActions) {
		t.Fatalf("audit log %+v, want %v", all, wantActions)
	}
	seen := map[int64]bool{}
	for i, a := range all {
		if a.Action != wantActions[i] || a.Account != "acct" || a.EndpointID != "ep_a" || seen[a.ID] {
			t.Fatalf("audit entry %d: %+v, want action %s, a new id (log %+v)", i, a, wantActions[i], all)
		}
		seen[a.ID] = true
		if i > 0 && a.At.After(all[i-1].At) {
			t.Fatalf("audit log not newest first: %+v", all)
		}
	}
	if all[3].Reason != outboxdriver.Reason5xx || !all[3].At.Equal(t0.Add(2*time.Minute)) || all[1].Reason != outboxdriver.ReasonManual {
		t.Fatalf("audit entries not as written: %+v", all)
	}
	top, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 2})
	if err != nil || !reflect.DeepEqual(top, all[:2]) {
		t.Fatalf("limit 2: %+v %v", top, err)
	}
	if none, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "nobody", Limit: 10}); err != nil && !errors.Is(err, outboxdriver.ErrNotFound) || len(none) != 0 {
		t.Fatalf("an account without entries: %+v %v", none, err)
	}
}
