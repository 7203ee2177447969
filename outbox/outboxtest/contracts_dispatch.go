package outboxtest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testClaimDue: a claim takes the earliest due deliveries first, only PENDING ones,
// and counts the leases an endpoint already has against its current InFlightCap;
// NextDue looks only at unleased PENDING deliveries.
func testClaimDue(t *testing.T, s outboxdriver.Store) {
	// Published out of due order.
	var ids = map[time.Duration]string{}
	for i, off := range []time.Duration{3, 1, 4, 2, 5} {
		ds := publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(off*time.Second))
		ids[off] = ds[0].ID
	}
	// Finished deliveries long due are never claimed, nor due.
	failed := setStatus(t, s, "acct", ids[1], outboxdriver.DeliveryFailed, t0)
	dead := setStatus(t, s, "acct", ids[2], outboxdriver.DeliveryDead, t0)
	if due, ok, err := s.NextDue(ctx); err != nil || !ok || !due.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("NextDue %v %v %v, want the earliest PENDING at +3s", due, ok, err)
	}
	jobs := claim(t, s, t0.Add(time.Minute), 2, "tok")
	if len(jobs) != 2 || !sameSet(jobs, ids[3], ids[4]) {
		t.Fatalf("claimed %v, want the two earliest PENDING (%s, %s)", jobIDs(jobs), ids[3], ids[4])
	}
	if due, ok, err := s.NextDue(ctx); err != nil || !ok || !due.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("NextDue %v %v %v, want +5s once the earlier ones are leased", due, ok, err)
	}
	for _, d := range []outboxdriver.Delivery{failed, dead} {
		if got, _ := getDelivery(t, s, "acct", d.ID); got.LeaseUntil != nil || got.Status != d.Status {
			t.Fatalf("finished delivery claimed: %+v", got)
		}
	}
	// The cap drops below the leases held: nothing more until they are fewer than it.
	if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: "ep_a", Change: func(ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ep.InFlightCap = 1
		return outboxdriver.Change{At: t0, Endpoint: &ep}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	done := func(job outboxdriver.Job) outboxdriver.Completion {
		return outboxdriver.Completion{DeliveryID: job.Delivery.ID, Token: job.Token,
			Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
				nd := d
				nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, t0.Add(time.Minute)
				return outboxdriver.Change{At: t0.Add(time.Minute), Delivery: &nd}, nil
			}}
	}
	applied, more, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{done(jobs[0])}, Next: outboxdriver.ClaimParams{Now: t0.Add(time.Minute), LeaseUntil: t0.Add(2 * time.Minute), Limit: 10, Token: "tok2"}})
	if err != nil || !reflect.DeepEqual(applied, []bool{true}) || len(more) != 0 {
		t.Fatalf("one of two leases released under cap 1: applied %v, claimed %v, %v", applied, jobIDs(more), err)
	}
	if _, err := s.Complete(ctx, []outboxdriver.Completion{done(jobs[1])}); err != nil {
		t.Fatal(err)
	}
	if more := claim(t, s, t0.Add(time.Minute), 10, "tok3"); len(more) != 1 || more[0].Delivery.ID != ids[5] {
		t.Fatalf("claimed %v once no lease is held, want %s", jobIDs(more), ids[5])
	}
	if _, ok, err := s.NextDue(ctx); ok || err != nil {
		t.Fatalf("NextDue with every PENDING delivery leased: %v %v", ok, err)
	}
}

func jobIDs(jobs []outboxdriver.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Delivery.ID
	}
	return out
}

func sameSet(jobs []outboxdriver.Job, ids ...string) bool {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, j := range jobs {
		if !want[j.Delivery.ID] {
			return false
		}
		delete(want, j.Delivery.ID)
	}
	return len(want) == 0
}

// testCompleteTokens: an outcome applies only while its delivery carries its token: a
// second completion of the same lease, and the completion of a lease that was reaped
// and claimed again by another claim, are skipped; the new lease's completion
// applies. Results follow the order of the outcomes.
func testCompleteTokens(t *testing.T, s outboxdriver.Store) {
	ds := publish(t, s, "acct", "evt_1", t0)
	publish(t, s, "acct", "evt_2", t0)
	if applied, err := s.Complete(ctx, nil); err != nil || len(applied) != 0 {
		t.Fatalf("an empty batch: %v %v", applied, err)
	}
	first := claim(t, s, t0, 10, "tok1")
	if len(first) != 2 {
		t.Fatalf("claimed %d", len(first))
	}
	succeed := func(id, token string, calls *int) outboxdriver.Completion {
		return outboxdriver.Completion{DeliveryID: id, Token: token, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			*calls++
			ch := attemptChange(d, t0.Add(time.Minute), t0)
			ch.Delivery.Status = outboxdriver.DeliverySucceeded
			return ch, nil
		}}
	}
	var calls int
	other := first[1].Delivery.ID
	if first[1].Delivery.ID == ds[0].ID {
		other = first[0].Delivery.ID
	}
	// The stale one first, then the good one, then the same again.
	applied, err := s.Complete(ctx, []outboxdriver.Completion{succeed(other, "tok_other", &calls),
		succeed(other, "tok1", &calls), succeed(other, "tok1", &calls)})
	if err != nil || !reflect.DeepEqual(applied, []bool{false, true, false}) || calls != 1 {
		t.Fatalf("applied %v (%d decisions), %v; want [false true false]", applied, calls, err)
	}
	if again, err := s.Complete(ctx, []outboxdriver.Completion{succeed(other, "tok1", &calls)}); err != nil || again[0] || calls != 1 {
		t.Fatalf("a lease completed twice: %v %v", again, err)
	}
	// Reaped, then claimed again: only the new token completes it.
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(2 * time.Minute), Limit: 10, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return attemptChange(d, t0.Add(2*time.Minute), t0.Add(2*time.Minute)), nil
	}}); n != 1 || err != nil {
		t.Fatalf("reaped %d, %v", n, err)
	}
	second := claim(t, s, t0.Add(2*time.Minute), 10, "tok2")
	if len(second) != 1 || second[0].Delivery.ID != ds[0].ID {
		t.Fatalf("claimed again %v", jobIDs(second))
	}
	calls = 0
	applied, err = s.Complete(ctx, []outboxdriver.Completion{succeed(ds[0].ID, "tok1", &calls), succeed(ds[0].ID, "tok2", &calls)})
	if err != nil || !reflect.DeepEqual(applied, []bool{false, true}) || calls != 1 {
		t.Fatalf("old and new lease: applied %v (%d decisions), %v", applied, calls, err)
	}
	if d, as := getDelivery(t, s, "acct", ds[0].ID); d.Status != outboxdriver.DeliverySucceeded || d.LeaseUntil != nil || len(as) != 2 {
		t.Fatalf("after the new lease's completion: %+v, %d attempts", d, len(as))
	}
}

// testCompleteUnleased: a delivery that holds no lease carries no token, so an outcome
// for it is skipped, even one whose token is empty.
func testCompleteUnleased(t *testing.T, s outboxdriver.Store) {
	ds := publish(t, s, "acct", "evt_1", t0)
	before := takeSnapshot(t, s, "acct")
	applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: ds[0].ID, Token: "",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			t.Error("an outcome for an unleased delivery was decided")
			return attemptChange(d, t0, t0), nil
		}}})
	if err != nil || len(applied) != 1 || applied[0] {
		t.Fatalf("applied %v, %v; want [false]", applied, err)
	}
	requireUnchanged(t, s, "acct", before, "an outcome for an unleased delivery")
}

// testReapScope: Reap takes at most limit deliveries, only leased PENDING ones whose
// lease ended before now (a publish lease as well as a claim's), and applies each
// Change whole (endpoint and waiting deliveries too).
func testReapScope(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"))
	for i := range 3 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0)
	}
	// 6 deliveries: 3 per endpoint. Lease 4 until +1m, 1 until +1h; 1 stays unleased.
	short, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Minute), Limit: 4, Token: "short"})
	if err != nil || len(short) != 4 {
		t.Fatalf("claimed %d, %v", len(short), err)
	}
	long, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Hour), Limit: 1, Token: "long"})
	if err != nil || len(long) != 1 {
		t.Fatalf("claimed %d, %v", len(long), err)
	}
	// A publish lease expires the same way.
	ev := outboxdriver.Event{ID: "evt_pub", Account: "acct", Type: "call.status", CreatedAt: t0, Data: []byte(`{}`)}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d, _, ok := leasingPlan(ev, t0, t0.Add(time.Minute))(ep)
		return d, nil, ok && ep.ID == "ep_a"
	}})
	if err != nil || len(pub.Deliveries) != 1 || pub.Deliveries[0].LeaseUntil == nil {
		t.Fatalf("publish lease: %+v %v", pub, err)
	}
	now := t0.Add(time.Minute + time.Second)
	reaped := map[string]bool{}
	decide := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		if d.LeaseUntil == nil || !d.LeaseUntil.Before(now) || d.Status != outboxdriver.DeliveryPending {
			t.Errorf("reaping %+v at %v", d, now)
		}
		reaped[d.ID] = true
		return attemptChange(d, now, now.Add(time.Hour)), nil
	}
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: now, Limit: 3, Decide: decide}); n != 3 || err != nil {
		t.Fatalf("first pass reaped %d, %v; want the limit 3", n, err)
	}
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: now, Limit: 3, Decide: decide}); n != 2 || err != nil {
		t.Fatalf("second pass reaped %d, %v; want the 2 expired left", n, err)
	}
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: now, Limit: 3, Decide: decide}); n != 0 || err != nil {
		t.Fatalf("third pass reaped %d, %v", n, err)
	}
	if len(reaped) != 5 || reaped[long[0].Delivery.ID] || !reaped[pub.Deliveries[0].ID] {
		t.Fatalf("reaped %v; want the 4 short leases and the publish lease, not %s", reaped, long[0].Delivery.ID)
	}
	if d, _ := getDelivery(t, s, "acct", long[0].Delivery.ID); d.LeaseUntil == nil {
		t.Fatalf("a live lease was reaped: %+v", d)
	}
	// A reap's Change is applied whole: the delivery, the endpoint, its waiting
	// deliveries and the audit entries.
	later := t0.Add(4 * time.Hour)
	n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: later, Limit: 10, Decide: func(d outboxdriver.Delivery, e outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ch := attemptChange(d, later, later)
		ch.Delivery.Status = outboxdriver.DeliveryDead
		ne := e
		ne.Status, ne.PausedAt = outboxdriver.EndpointPaused, &later
		ch.Endpoint, ch.Waiting, ch.WaitingReason = &ne, outboxdriver.DeliveryFailed, "paused"
		ch.Audit = []outboxdriver.AuditEntry{{Account: "acct", EndpointID: e.ID, Action: outboxdriver.AuditPaused, At: later}}
		return ch, nil
	}})
	if n != 1 || err != nil {
		t.Fatalf("reaped %d, %v; want the long lease only", n, err)
	}
	paused := long[0].Endpoint.ID
	if e, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: paused}); e.Status != outboxdriver.EndpointPaused {
		t.Fatalf("the reap's endpoint change not written: %+v", e)
	}
	if d, _ := getDelivery(t, s, "acct", long[0].Delivery.ID); d.Status != outboxdriver.DeliveryDead || d.LeaseUntil != nil {
		t.Fatalf("reaped delivery %+v", d)
	}
	rest, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", EndpointID: paused, Status: outboxdriver.DeliveryPending, Limit: 100})
	if len(rest) != 0 {
		t.Fatalf("the reap's Waiting left %v PENDING on %s", deliveryIDs(rest), paused)
	}
	failed, _ := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", EndpointID: paused, Status: outboxdriver.DeliveryFailed, Limit: 100})
	if len(failed) == 0 || failed[0].LastError != "paused" {
		t.Fatalf("the reap's Waiting: %+v", failed)
	}
	if audit, _ := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 1}); len(audit) != 1 || audit[0].Action != outboxdriver.AuditPaused {
		t.Fatalf("the reap's audit entry: %+v", audit)
	}
}

// testRecoverScope: Recover moves only the endpoint's FAILED deliveries: not those of
// another endpoint, nor DEAD, DROPPED, SUCCEEDED or PENDING ones; each keeps its
// attempts and starts a new run at them, due at now.
func testRecoverScope(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"))
	statuses := []outboxdriver.DeliveryStatus{outboxdriver.DeliveryFailed, outboxdriver.DeliveryDead, outboxdriver.DeliveryDropped,
		outboxdriver.DeliverySucceeded, outboxdriver.DeliveryPending, outboxdriver.DeliveryFailed}
	var all []outboxdriver.Delivery
	for i, st := range statuses {
		for _, d := range publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0) {
			if st != outboxdriver.DeliveryPending {
				d = setStatus(t, s, "acct", d.ID, st, t0)
				if i == len(statuses)-1 { // a second attempt, for the budget
					d = setStatus(t, s, "acct", d.ID, st, t0)
				}
			}
			all = append(all, d)
		}
	}
	now := t0.Add(time.Hour)
	n, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_a", Since: time.Time{}, Now: now})
	if err != nil || n != 2 {
		t.Fatalf("recovered %d, %v; want ep_a's 2 FAILED", n, err)
	}
	for _, before := range all {
		d, as := getDelivery(t, s, "acct", before.ID)
		if before.EndpointID == "ep_a" && before.Status == outboxdriver.DeliveryFailed {
			if d.Status != outboxdriver.DeliveryPending || d.Attempts != before.Attempts || d.RunStart != before.Attempts ||
				!d.NextAttemptAt.Equal(now) || d.LeaseUntil != nil || len(as) != before.Attempts {
				t.Fatalf("recovered %+v (was %+v)", d, before)
			}
			continue
		}
		if d.Status != before.Status || d.RunStart != before.RunStart || !d.NextAttemptAt.Equal(before.NextAttemptAt) {
			t.Fatalf("Recover changed %+v (was %+v)", d, before)
		}
	}
	if n, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_a", Since: time.Time{}, Now: now}); n != 0 || err != nil {
		t.Fatalf("a second recover: %d %v", n, err)
	}
}
