package outboxtest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testCompleteInOrder: a batch applies its outcomes as if one after the other. Each
// decision sees the endpoint and delivery as the earlier ones left them, exactly as a
// read would return them (times in microseconds, UTC), and a Waiting change reaches a
// delivery of the batch that an earlier outcome released.
func testCompleteInOrder(t *testing.T, s outboxdriver.Store) {
	for i := range 3 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0)
	}
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 3 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at := t0.Add(2 * time.Second)
	// Nanoseconds and another zone: the next decision must see what a read returns.
	failingSince := time.Date(2026, 5, 1, 12, 0, 1, 1500, time.FixedZone("CEST", 2*3600))
	var seen []outboxdriver.Endpoint
	var thirdSaw outboxdriver.Delivery
	outcomes := []outboxdriver.Completion{
		{DeliveryID: jobs[0].Delivery.ID, Token: "tok", Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			seen = append(seen, ep)
			ch := attemptChange(d, at, at.Add(time.Hour)) // back to waiting, unleased
			ne := ep
			ne.Failures, ne.FailingSince = 1, &failingSince
			ch.Endpoint = &ne
			return ch, nil
		}},
		{DeliveryID: jobs[1].Delivery.ID, Token: "tok", Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			seen = append(seen, ep)
			ch := attemptChange(d, at, at.Add(time.Hour))
			ne := ep
			ne.Failures++
			ne.Status, ne.PausedAt, ne.PauseReason = outboxdriver.EndpointPaused, &at, outboxdriver.Reason5xx
			ch.Endpoint = &ne
			ch.Waiting, ch.WaitingReason = outboxdriver.DeliveryFailed, "endpoint paused"
			return ch, nil
		}},
		{DeliveryID: jobs[2].Delivery.ID, Token: "tok", Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			seen = append(seen, ep)
			thirdSaw = d
			return attemptChange(d, at, at.Add(time.Hour)), nil
		}},
	}
	applied, err := s.Complete(ctx, outcomes)
	if err != nil || !reflect.DeepEqual(applied, []bool{true, true, true}) {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if len(seen) != 3 || seen[0].Failures != 0 || seen[1].Failures != 1 || seen[2].Failures != 2 {
		t.Fatalf("decisions saw failures %d, %d, %d; want 0, 1, 2", seen[0].Failures, seen[1].Failures, seen[2].Failures)
	}
	stored, err := s.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: "ep_a"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen[2], stored) {
		t.Fatalf("the last decision saw\n%+v\nbut the store holds\n%+v", seen[2], stored)
	}
	if want := failingSince.UTC().Truncate(time.Microsecond); stored.FailingSince == nil || *stored.FailingSince != want {
		t.Fatalf("failing since %v, want %v", stored.FailingSince, want)
	}
	// The third was still leased when the second's Waiting ran: untouched by it.
	if thirdSaw.LeaseUntil == nil || thirdSaw.Status != outboxdriver.DeliveryPending {
		t.Fatalf("third decision saw %+v", thirdSaw)
	}
	// The first had been released by then: Waiting made it FAILED.
	want := map[string]outboxdriver.DeliveryStatus{jobs[0].Delivery.ID: outboxdriver.DeliveryFailed,
		jobs[1].Delivery.ID: outboxdriver.DeliveryPending, jobs[2].Delivery.ID: outboxdriver.DeliveryPending}
	for id, status := range want {
		d, as := getDelivery(t, s, "acct", id)
		if d.Status != status || d.LeaseUntil != nil || d.Attempts != 1 || len(as) != 1 {
			t.Fatalf("delivery %s: %s lease %v attempts %d/%d, want %s", id, d.Status, d.LeaseUntil, d.Attempts, len(as), status)
		}
	}
}

// testCompleteClaim: the claim made with a completion counts the leases the
// completion released, and fails with it.
func testCompleteClaim(t *testing.T, b Bundle) {
	s := b.Store
	ep := endpoint("ep_a", "acct")
	ep.InFlightCap = 2
	mustCreate(t, s, ep)
	for i := range 5 {
		publish(t, s, "acct", fmt.Sprintf("evt_%d", i), t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(time.Minute)
	first := claim(t, s, now, 10, "tok1")
	if len(first) != 2 {
		t.Fatalf("claimed %d, want the cap 2", len(first))
	}
	succeed := func(job outboxdriver.Job, token string) outboxdriver.Completion {
		return outboxdriver.Completion{DeliveryID: job.Delivery.ID, Token: token,
			Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
				nd := d
				nd.Status, nd.UpdatedAt = outboxdriver.DeliverySucceeded, now
				return outboxdriver.Change{At: now, Delivery: &nd}, nil
			}}
	}
	next := outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok2"}
	// A failing decision aborts both: nothing recorded, nothing claimed.
	boom := errors.New("boom")
	_, jobs, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed(first[0], "tok1"), {DeliveryID: first[1].Delivery.ID,
		Token: "tok1", Decide: func(outboxdriver.Delivery, outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return outboxdriver.Change{}, boom
		}}}, Next: next})
	if !errors.Is(err, boom) || len(jobs) != 0 {
		t.Fatalf("failed batch: %d jobs, %v", len(jobs), err)
	}
	if d, _ := getDelivery(t, s, "acct", first[0].Delivery.ID); d.Status != outboxdriver.DeliveryPending || d.LeaseUntil == nil {
		t.Fatalf("an aborted batch wrote %+v", d)
	}
	if again := claim(t, s, now, 10, "tok3"); len(again) != 0 {
		t.Fatalf("an aborted batch released its leases: claimed %d", len(again))
	}
	// One completion frees one slot, and the same call takes it.
	applied, jobs, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed(first[0], "tok1")}, Next: next})
	if err != nil || !reflect.DeepEqual(applied, []bool{true}) {
		t.Fatalf("applied %v, %v", applied, err)
	}
	if len(jobs) != 1 || jobs[0].Token != "tok2" || jobs[0].Delivery.EventID != "evt_2" || jobs[0].Event.ID != "evt_2" ||
		jobs[0].Endpoint.ID != "ep_a" || jobs[0].Delivery.LeaseUntil == nil || !jobs[0].Delivery.LeaseUntil.Equal(next.LeaseUntil) {
		t.Fatalf("claimed with the completion: %+v", jobs)
	}
	if d, _ := getDelivery(t, s, "acct", first[0].Delivery.ID); d.Status != outboxdriver.DeliverySucceeded || d.LeaseUntil != nil {
		t.Fatalf("completed delivery %+v", d)
	}
	// Limit 0 claims nothing; a stale token is skipped.
	applied, jobs, err = s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{succeed(first[1], "stale")}, Next: outboxdriver.ClaimParams{}})
	if err != nil || !reflect.DeepEqual(applied, []bool{false}) || len(jobs) != 0 {
		t.Fatalf("stale completion: %v %d %v", applied, len(jobs), err)
	}
}
