package outboxtest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func testComplete(t *testing.T, s outboxdriver.Store) {
	ds := publish(t, s, "acct", "evt_1", t0)
	waiting := publish(t, s, "acct", "evt_2", t0.Add(time.Hour))
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at := t0.Add(2 * time.Second)
	var sawEndpoint outboxdriver.Endpoint
	var want outboxdriver.Change
	applied, err := s.Complete(ctx, []outboxdriver.Completion{
		{DeliveryID: ds[0].ID, Token: "tok", Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			if d.LeaseUntil == nil {
				t.Errorf("decide saw no lease on %+v", d)
			}
			sawEndpoint = ep
			want = attemptChange(d, at, at.Add(time.Minute))
			nep := ep
			nep.Status, nep.PausedAt, nep.PauseReason, nep.Failures = outboxdriver.EndpointPaused, &at, outboxdriver.Reason5xx, 1
			want.Endpoint = &nep
			want.Waiting, want.WaitingReason = outboxdriver.DeliveryFailed, "endpoint paused"
			want.Audit = []outboxdriver.AuditEntry{{Account: "acct", EndpointID: "ep_a", Action: outboxdriver.AuditPaused, Reason: outboxdriver.Reason5xx, At: at}}
			return want, nil
		}},
		{DeliveryID: ds[0].ID, Token: "stale", Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
			t.Error("decide called with a stale token")
			return outboxdriver.Change{}, nil
		}},
	})
	if err != nil || !reflect.DeepEqual(applied, []bool{true, false}) {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if sawEndpoint.ID != "ep_a" {
		t.Fatalf("decide saw endpoint %+v", sawEndpoint)
	}
	d, as := getDelivery(t, s, "acct", ds[0].ID)
	if d.LeaseUntil != nil || d.Attempts != 1 || !d.NextAttemptAt.Equal(at.Add(time.Minute)) || !d.UpdatedAt.Equal(at) {
		t.Fatalf("delivery after completion: %+v", d)
	}
	if len(as) != 1 || !reflect.DeepEqual(as[0], *want.Attempt) {
		t.Fatalf("attempt round trip:\n got %+v\nwant %+v", as, *want.Attempt)
	}
	ep, _ := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"})
	if ep.Status != outboxdriver.EndpointPaused || ep.Failures != 1 || !ep.PausedAt.Equal(at) {
		t.Fatalf("endpoint after completion: %+v", ep)
	}
	// Waiting applies to other unleased PENDING deliveries, not to the decided one.
	if w, _ := getDelivery(t, s, "acct", waiting[0].ID); w.Status != outboxdriver.DeliveryFailed || w.LastError != "endpoint paused" {
		t.Fatalf("waiting delivery: %+v", w)
	}
	if d.Status != outboxdriver.DeliveryPending {
		t.Fatalf("decided delivery overwritten by Waiting: %s", d.Status)
	}
	// An error from decide aborts the whole batch: nothing of it is written.
	mustCreate(t, s, endpoint("ep_b", "acct2"))
	publish(t, s, "acct2", "evt_3", t0)
	publish(t, s, "acct2", "evt_4", t0)
	two := claim(t, s, t0, 10, "tok2")
	if len(two) != 2 {
		t.Fatalf("claimed %d", len(two))
	}
	boom := errors.New("boom")
	_, err = s.Complete(ctx, []outboxdriver.Completion{
		{DeliveryID: two[0].Delivery.ID, Token: "tok2", Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			ch := attemptChange(d, at, at)
			ch.Delivery.Status = outboxdriver.DeliverySucceeded
			return ch, nil
		}},
		{DeliveryID: two[1].Delivery.ID, Token: "tok2", Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return outboxdriver.Change{}, boom
		}},
	})
	if !errors.Is(err, boom) {
		t.Fatalf("decide error: %v", err)
	}
	if d, as := getDelivery(t, s, "acct2", two[0].Delivery.ID); d.Status != outboxdriver.DeliveryPending || d.LeaseUntil == nil || len(as) != 0 {
		t.Fatalf("an aborted batch wrote %+v %+v", d, as)
	}
}

func testReap(t *testing.T, s outboxdriver.Store) {
	publish(t, s, "acct", "evt_1", t0)
	publish(t, s, "acct", "evt_2", t0)
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: t0, LeaseUntil: t0.Add(time.Minute), Limit: 1, Token: "tok"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d %v", len(jobs), err)
	}
	decide := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		return attemptChange(d, t0.Add(2*time.Minute), t0.Add(2*time.Minute)), nil
	}
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(time.Minute), Limit: 10, Decide: decide}); n != 0 || err != nil {
		t.Fatalf("reaped %d at the lease's end, %v", n, err)
	}
	n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: t0.Add(time.Minute + time.Microsecond), Limit: 10, Decide: decide})
	if n != 1 || err != nil {
		t.Fatalf("reaped %d, %v", n, err)
	}
	d, as := getDelivery(t, s, "acct", jobs[0].Delivery.ID)
	if d.LeaseUntil != nil || d.Attempts != 1 || len(as) != 1 {
		t.Fatalf("reaped delivery %+v", d)
	}
	// The reaped lease's late completion is ignored.
	applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: d.ID, Token: "tok",
		Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
			t.Error("late completion decided")
			return outboxdriver.Change{}, nil
		}}})
	if err != nil || applied[0] {
		t.Fatalf("late completion applied %v, %v", applied, err)
	}
}
