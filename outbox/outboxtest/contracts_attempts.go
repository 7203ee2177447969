package outboxtest

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testAttemptsKeptWhole: every attempt of a delivery reads back as it was recorded,
// its request headers included, whichever call recorded it (a publish's plan,
// Complete, CompleteClaim, Reap, UpdateDelivery) and wherever the store keeps it
// meanwhile: a store that keeps a delivery's latest attempt apart from the earlier
// ones moves each, whole, when a newer one is recorded.
func testAttemptsKeptWhole(t *testing.T, s outboxdriver.Store) {
	headers := func(n int) http.Header {
		return http.Header{"Content-Type": {"application/json"}, "Webhook-Id": {fmt.Sprintf("msg_%d", n)},
			"Authorization": {"Bearer ****"}, "X-Attempt": {fmt.Sprint(n), "again"}}
	}
	var want []outboxdriver.Attempt
	record := func(d outboxdriver.Delivery, at time.Time) outboxdriver.Change {
		ch := attemptChange(d, at, at)
		ch.Attempt.RequestHeaders = headers(ch.Attempt.Number)
		ch.Attempt.Response = fmt.Sprintf(`{"attempt":%d}`, ch.Attempt.Number)
		want = append(want, *ch.Attempt)
		return ch
	}
	check := func(id, after string) {
		t.Helper()
		if _, as := getDelivery(t, s, "acct", id); !reflect.DeepEqual(as, want) {
			t.Fatalf("attempts after %s:\n got %+v\nwant %+v", after, as, want)
		}
	}

	// Attempt 0, a plan's (refused by a paused endpoint, say), is stored with the delivery.
	ev := outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0}
	pub := publishWith(t, s, "acct", ev.ID, t0, t0, func(ev outboxdriver.Event) outboxdriver.PlanFunc {
		all := planAll(ev, t0)
		return func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			d, _, ok := all(ep)
			a := outboxdriver.Attempt{DeliveryID: d.ID, Number: 0, At: t0, ScheduledAt: t0, Class: outboxdriver.ClassEndpointPaused,
				Error: "endpoint paused", RequestHeaders: headers(0)}
			want = append(want, a)
			return d, &a, ok
		}
	})
	id := pub.Deliveries[0].ID
	check(id, "the publish")

	at := t0
	if jobs := claim(t, s, at, 10, "tok1"); len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at = at.Add(time.Second)
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: id, Token: "tok1",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return record(d, at), nil
		}}}); err != nil || !applied[0] {
		t.Fatalf("complete: %v %v", applied, err)
	}
	check(id, "Complete")

	if jobs := claim(t, s, at, 10, "tok2"); len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at = at.Add(time.Second)
	if applied, _, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: []outboxdriver.Completion{{DeliveryID: id, Token: "tok2",
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return record(d, at), nil
		}}}}); err != nil || !applied[0] {
		t.Fatalf("complete and claim: %v %v", applied, err)
	}
	check(id, "CompleteClaim")

	if jobs := claim(t, s, at, 10, "tok3"); len(jobs) != 1 {
		t.Fatalf("claimed %d", len(jobs))
	}
	at = at.Add(time.Minute + time.Second) // past the lease
	if n, err := s.Reap(ctx, outboxdriver.ReapParams{Now: at, Limit: 10,
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return record(d, at), nil
		}}); err != nil || n != 1 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	check(id, "Reap")

	at = at.Add(time.Second)
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: id,
		Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return record(d, at), nil
		}}); err != nil {
		t.Fatal(err)
	}
	check(id, "UpdateDelivery")
}
