package outboxtest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testAuditFields: audit entries keep every field as written (actor, reason, delivery,
// count), an empty actor reads as ActorSystem, a recover writes its entry with the
// count of deliveries it queued, and ListAudit is newest first, one account's and
// optionally one endpoint's, paged by BeforeID without duplicates or gaps.
func testAuditFields(t *testing.T, b Bundle) {
	s := b.Store
	mustCreate(t, s, endpoint("ep_a", "acct"), endpoint("ep_b", "acct"), endpoint("ep_x", "other"))
	ds := publish(t, s, "acct", "evt_1", t0)
	var failed outboxdriver.Delivery
	for _, d := range ds {
		if d.EndpointID == "ep_a" {
			failed = setStatus(t, s, "acct", d.ID, outboxdriver.DeliveryFailed, t0)
		}
	}
	at := t0.Add(time.Minute)
	written := []outboxdriver.AuditEntry{
		{Account: "acct", EndpointID: "ep_a", Action: outboxdriver.AuditPaused, Actor: "tok_1", Reason: "maintenance", At: at},
		{Account: "acct", EndpointID: "ep_b", Action: outboxdriver.AuditPaused, Reason: outboxdriver.ReasonGone, At: at},
		{Account: "acct", EndpointID: "ep_a", Action: outboxdriver.AuditResumed, Actor: "tok_1", At: at.Add(time.Second)},
	}
	for _, e := range written {
		e := e
		if _, err := s.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: "acct", ID: e.EndpointID, Change: func(outboxdriver.Endpoint) (outboxdriver.Change, error) {
			return outboxdriver.Change{At: e.At, Audit: []outboxdriver.AuditEntry{e}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	retried := outboxdriver.AuditEntry{Account: "acct", EndpointID: "ep_a", DeliveryID: failed.ID, Action: outboxdriver.AuditRetried,
		Actor: "tok_2", Reason: "was FAILED", At: at.Add(2 * time.Second)}
	if _, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: "acct", ID: failed.ID, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		d.Status = outboxdriver.DeliveryFailed // unchanged: only the entry matters here
		return outboxdriver.Change{At: retried.At, Delivery: &d, Audit: []outboxdriver.AuditEntry{retried}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	recovered := outboxdriver.AuditEntry{Account: "acct", EndpointID: "ep_a", Action: outboxdriver.AuditRecovered, Actor: "tok_2",
		Reason: "replay", Count: 99, At: at.Add(3 * time.Second)}
	n, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_a", Now: recovered.At, Audit: &recovered})
	if err != nil || n != 1 {
		t.Fatalf("Recover: %d %v", n, err)
	}
	recovered.Count = 1 // the store counts
	if _, err := s.Recover(ctx, outboxdriver.RecoverParams{Account: "acct", EndpointID: "ep_b", Now: recovered.At}); err != nil {
		t.Fatal(err) // no entry asked for, none written
	}

	all, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The three creations first (mustCreate), then the entries above, newest first.
	want := append(slices.Clone(written), retried, recovered)
	want[1].Actor = outboxdriver.ActorSystem
	slices.Reverse(want)
	if len(all) != len(want)+2 {
		t.Fatalf("listed %d entries, want %d: %+v", len(all), len(want)+2, all)
	}
	for i, w := range want {
		got := all[i]
		if got.ID == 0 || i > 0 && got.ID >= all[i-1].ID {
			t.Fatalf("entry %d id %d: not newest first by id: %+v", i, got.ID, all)
		}
		got.ID = 0
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("entry %d\n%+v\nwant\n%+v", i, got, w)
		}
	}
	if others, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "other", Limit: 100}); err != nil || len(others) != 1 || others[0].EndpointID != "ep_x" {
		t.Fatalf("other account's log: %+v %v", others, err)
	}
	for _, q := range []outboxdriver.ListAuditParams{{Account: "acct"}, {Account: "acct", EndpointID: "ep_a"}} {
		q.Limit = 100
		whole, err := s.ListAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range whole {
			if q.EndpointID != "" && e.EndpointID != q.EndpointID {
				t.Fatalf("%+v listed %+v", q, e)
			}
		}
		q.Limit = 2
		paged := walkPages(t, q.Limit, func() ([]outboxdriver.AuditEntry, error) { return s.ListAudit(ctx, q) },
			func(last outboxdriver.AuditEntry) { q.BeforeID = last.ID })
		if !reflect.DeepEqual(paged, whole) {
			t.Fatalf("paged %+v\nwant %+v", paged, whole)
		}
	}
	if _, err := s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: "acct", EndpointID: "ep_x", Limit: 10}); err != nil && !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatal(err)
	}
}
