package outboxtest

import (
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func testPublish(t *testing.T, b Bundle) {
	s := b.Store
	paused := endpoint("ep_p", "acct")
	paused.Status = outboxdriver.EndpointPaused
	mustCreate(t, s, endpoint("ep_a", "acct"), paused, endpoint("ep_x", "other"))

	ev := outboxdriver.Event{ID: "evt_1", Account: "acct", Type: "call.status", CreatedAt: t0.Add(-time.Hour),
		Data: json.RawMessage(`{"callSid":"CA1"}`), TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	var seen []string
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: t0, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		seen = append(seen, ep.ID)
		d, _, _ := planAll(ev, t0)(ep)
		if ep.Status == outboxdriver.EndpointPaused {
			d.Status = outboxdriver.DeliveryFailed
			return d, &outboxdriver.Attempt{DeliveryID: d.ID, Number: 0, At: t0, ScheduledAt: t0, Class: outboxdriver.ClassEndpointPaused}, true
		}
		return d, nil, true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || len(pub.Deliveries) != 2 || pub.Duplicate {
		t.Fatalf("plan saw %v, deliveries %d (the other account's endpoint must not be planned)", seen, len(pub.Deliveries))
	}
	got, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_1"})
	if err != nil || got.ID != ev.ID || !got.CreatedAt.Equal(ev.CreatedAt) || string(got.Data) != string(ev.Data) || got.Type != ev.Type ||
		got.TraceParent != ev.TraceParent {
		t.Fatalf("event round trip: %+v %v", got, err)
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "other", ID: "evt_1"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("event across accounts: %v", err)
	}
	for _, d := range pub.Deliveries {
		stored, as := getDelivery(t, s, "acct", d.ID)
		if stored.EndpointID == "ep_p" {
			if stored.Status != outboxdriver.DeliveryFailed || len(as) != 1 || as[0].Number != 0 || as[0].Class != outboxdriver.ClassEndpointPaused {
				t.Fatalf("paused endpoint's delivery: %+v %+v", stored, as)
			}
		} else if stored.Status != outboxdriver.DeliveryPending || !stored.NextAttemptAt.Equal(t0) || len(as) != 0 {
			t.Fatalf("delivery: %+v", stored)
		}
	}
	// The same id again: the stored event and deliveries, nothing planned. Another
	// trace's publish of it is still a duplicate, and the event keeps its first trace.
	other := ev
	other.TraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	again, err := s.Publish(ctx, outboxdriver.PublishParams{Event: other, Now: t0, Plan: func(outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		t.Fatal("plan called for a duplicate")
		return outboxdriver.Delivery{}, nil, false
	}})
	if err != nil || !again.Duplicate || len(again.Deliveries) != 2 || again.Event.TraceParent != ev.TraceParent {
		t.Fatalf("duplicate: %+v %v", again, err)
	}
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 1 || jobs[0].Event.TraceParent != ev.TraceParent {
		t.Fatalf("a claimed job's event lost its trace: %+v", jobs)
	}
	for _, evOther := range []outboxdriver.Event{
		{ID: "evt_1", Account: "acct", Type: ev.Type, Data: json.RawMessage(`{"callSid":"CA2"}`)},
	} {
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: evOther, Now: t0, Plan: planAll(evOther, t0)}); !errors.Is(err, outboxdriver.ErrConflict) {
			t.Fatalf("conflicting id: %v", err)
		}
	}
	// A failing plan insert (duplicate delivery id) rolls the event back.
	ev2 := outboxdriver.Event{ID: "evt_2", Account: "acct", Type: "x", CreatedAt: t0, Data: json.RawMessage(`1`)}
	if _, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev2, Now: t0, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{ID: "same", Account: "acct", EventID: "evt_2", EndpointID: ep.ID,
			Status: outboxdriver.DeliveryPending, NextAttemptAt: t0, CreatedAt: t0, UpdatedAt: t0}, nil, true
	}}); err == nil {
		t.Fatal("duplicate delivery ids accepted")
	}
	if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_2"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("half-published event kept: %v", err)
	}
}

func testPublishTx(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"))
	for _, commit := range []bool{false, true} {
		id := map[bool]string{false: "evt_rb", true: "evt_ok"}[commit]
		tx, err := b.BeginTx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev := outboxdriver.Event{ID: id, Account: "acct", Type: "x", CreatedAt: t0, Data: json.RawMessage(`{}`)}
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Tx: tx.Tx, Event: ev, Now: t0, Plan: planAll(ev, t0)}); err != nil {
			t.Fatal(err)
		}
		end := tx.Rollback
		if commit {
			end = tx.Commit
		}
		if err := end(); err != nil {
			t.Fatal(err)
		}
		_, err = s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: id})
		if commit != (err == nil) {
			t.Fatalf("commit=%v: event read %v", commit, err)
		}
	}
	jobs := claim(t, s, t0, 10, "tok")
	if len(jobs) != 1 || jobs[0].Event.ID != "evt_ok" {
		t.Fatalf("claimed %+v", jobs)
	}
	// A transaction of a type the store does not write in, or a nil one, is refused,
	// and nothing is stored.
	for _, foreign := range []any{struct{}{}, "tx", (*sql.Tx)(nil)} {
		ev := outboxdriver.Event{ID: "evt_foreign", Account: "acct", Type: "x", CreatedAt: t0, Data: json.RawMessage(`{}`)}
		if _, err := s.Publish(ctx, outboxdriver.PublishParams{Tx: foreign, Event: ev, Now: t0, Plan: planAll(ev, t0)}); !errors.Is(err, outboxdriver.ErrInvalid) {
			t.Fatalf("Publish with a %T as its transaction: %v, want ErrInvalid", foreign, err)
		}
		if _, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: ev.ID}); !errors.Is(err, outboxdriver.ErrNotFound) {
			t.Fatalf("the refused publish stored its event: %v", err)
		}
	}
}

// attemptChange is a Change recording a failed attempt and rescheduling.
func attemptChange(d outboxdriver.Delivery, at time.Time, next time.Time) outboxdriver.Change {
	nd := d
	nd.Attempts++
	nd.NextAttemptAt = next
	nd.UpdatedAt = at
	return outboxdriver.Change{At: at, Delivery: &nd, Attempt: &outboxdriver.Attempt{DeliveryID: d.ID, Number: nd.Attempts,
		At: at, ScheduledAt: d.NextAttemptAt, Duration: 1500 * time.Microsecond, Status: 503,
		Class: outboxdriver.ClassHTTP5xx, Error: "", Response: `{"busy":true}`,
		RequestHeaders: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer ****"}, "X-Two": {"a", "b"}}}}
}
