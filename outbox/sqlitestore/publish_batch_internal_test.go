package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// groupHarness runs hand-made groups of writes, as concurrent writers would queue them.
type groupHarness struct {
	t   *testing.T
	st  *Store
	now time.Time
}

func newGroupHarness(t *testing.T) *groupHarness {
	st := openTest(t, "group.db", Options{})
	h := &groupHarness{t: t, st: st, now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	for _, ep := range []struct{ id, account string }{{"ep_1", "a"}, {"ep_2", "a"}, {"ep_3", "b"}} {
		e := outboxdriver.Endpoint{ID: ep.id, Account: ep.account, URL: "https://example.com", Events: []string{"*"},
			Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: h.now, InFlightCap: 5}
		if err := st.CreateEndpoint(context.Background(), outboxdriver.CreateEndpointParams{Endpoint: e, Audit: outboxdriver.AuditEntry{Account: ep.account, EndpointID: ep.id,
			Action: outboxdriver.AuditCreated, At: h.now}}); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// publishReq is a group member doing what Store.Publish does; attemptOn adds attempt 0
// for that endpoint's delivery.
func (h *groupHarness) publishReq(id, account, data, attemptOn string) *writeReq {
	ev := outboxdriver.Event{ID: id, Account: account, Type: "call.status", CreatedAt: h.now, Data: json.RawMessage(data)}
	plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d := outboxdriver.Delivery{ID: "dlv_" + id + "_" + ep.ID, Account: account, EventID: id, EventType: ev.Type,
			EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: h.now, CreatedAt: h.now, UpdatedAt: h.now}
		if ep.ID != attemptOn {
			return d, nil, true
		}
		d.Status = outboxdriver.DeliveryFailed
		return d, &outboxdriver.Attempt{DeliveryID: d.ID, At: h.now, ScheduledAt: h.now, Class: outboxdriver.ClassEndpointPaused}, true
	}
	pr := &pubReq{p: outboxdriver.PublishParams{Event: ev, Now: h.now, Plan: plan}}
	return &writeReq{pub: pr, done: make(chan error, 1), fn: func(q querier) error {
		var err error
		pr.out, err = publish(context.Background(), q, pr.p)
		return err
	}}
}

func (h *groupHarness) result(r *writeReq) (outboxdriver.Published, error) {
	select {
	case err := <-r.done:
		return r.pub.out, err
	default:
		h.t.Fatal("a member of the group got no answer")
		return outboxdriver.Published{}, nil
	}
}

func deliveryIDs(p outboxdriver.Published) []string {
	var ids []string
	for _, d := range p.Deliveries {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestPublishTogether: the publishes of a group are written by the multi-row path,
// except those whose event id exists, which take their own way after it and so see
// it: a repeat within the group and an earlier event are duplicates, other content is
// a conflict. Other writes of the group run as usual.
func TestPublishTogether(t *testing.T) {
	h := newGroupHarness(t)
	ctx := context.Background()
	if _, err := h.st.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "old", Account: "a", Type: "call.status", CreatedAt: h.now,
		Data: json.RawMessage(`{"n":0}`)}, Now: h.now, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{ID: "dlv_old_" + ep.ID, Account: "a", EventID: "old", EventType: "call.status", EndpointID: ep.ID,
			Status: outboxdriver.DeliveryPending, NextAttemptAt: h.now, CreatedAt: h.now, UpdatedAt: h.now}, nil, true
	}}); err != nil {
		t.Fatal(err)
	}
	var otherRan bool
	other := &writeReq{done: make(chan error, 1), fn: func(q querier) error {
		otherRan = true
		return insertAudit(ctx, q, []outboxdriver.AuditEntry{{Account: "a", EndpointID: "ep_1", Action: "note", At: h.now}})
	}}
	batch := []*writeReq{
		h.publishReq("e1", "a", `{"n":1}`, ""),
		other,
		h.publishReq("e2", "b", `{"n":2}`, "ep_3"),
		h.publishReq("e1", "a", `{"n":1}`, ""),  // repeat in the group
		h.publishReq("old", "a", `{"n":0}`, ""), // published before
		h.publishReq("old", "a", `{"n":9}`, ""), // other content
		h.publishReq("e3", "a", `{"n":3}`, "ep_2"),
	}

	// Which members the multi-row path writes.
	tx, err := h.st.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make([]bool, len(batch))
	h.st.publishTogether(h.st.on(tx), batch, done)
	_ = tx.Rollback()
	if want := []bool{true, false, true, false, false, false, true}; !reflect.DeepEqual(done, want) {
		t.Fatalf("written together: %v, want %v", done, want)
	}

	h.st.runGroup(batch)
	e1, err := h.result(batch[0])
	if err != nil || e1.Duplicate || !reflect.DeepEqual(deliveryIDs(e1), []string{"dlv_e1_ep_1", "dlv_e1_ep_2"}) {
		t.Fatalf("e1: %+v, %v", e1, err)
	}
	if err := <-other.done; err != nil || !otherRan {
		t.Fatalf("other write: ran %v, %v", otherRan, err)
	}
	e2, err := h.result(batch[2])
	if err != nil || !reflect.DeepEqual(deliveryIDs(e2), []string{"dlv_e2_ep_3"}) {
		t.Fatalf("e2: %+v, %v", e2, err)
	}
	again, err := h.result(batch[3])
	if err != nil || !again.Duplicate || !reflect.DeepEqual(deliveryIDs(again), deliveryIDs(e1)) {
		t.Fatalf("repeat of e1: %+v, %v", again, err)
	}
	old, err := h.result(batch[4])
	if err != nil || !old.Duplicate || len(old.Deliveries) != 2 {
		t.Fatalf("old: %+v, %v", old, err)
	}
	if _, err := h.result(batch[5]); !errors.Is(err, outboxdriver.ErrConflict) {
		t.Fatalf("old with other content: %v", err)
	}
	if _, err := h.result(batch[6]); err != nil {
		t.Fatal(err)
	}
	// What the store holds: every delivery once, attempt 0 with its delivery.
	d, as, err := h.st.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "b", ID: "dlv_e2_ep_3"})
	if err != nil || d.Status != outboxdriver.DeliveryFailed || len(as) != 1 {
		t.Fatalf("e2 delivery %+v, attempts %+v, %v", d, as, err)
	}
	var n int
	if err := h.st.db.QueryRow(`SELECT count(*) FROM outbox_deliveries`).Scan(&n); err != nil || n != 2+1+2+2 {
		t.Fatalf("%d deliveries stored, want 7 (%v)", n, err)
	}
	// Attempt 0 is each delivery's latest, in its row (migration 0007).
	if err := h.st.db.QueryRow(`SELECT count(*) FROM outbox_deliveries WHERE attempt_number = 0`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d attempts stored, want 2 (%v)", n, err)
	}
}

// TestPublishTogetherFallsBack: when a multi-row statement fails, nothing of it stays
// and each publish runs on its own, so one bad publish fails alone.
func TestPublishTogetherFallsBack(t *testing.T) {
	h := newGroupHarness(t)
	good := h.publishReq("e1", "b", `{"n":1}`, "")
	bad := h.publishReq("e2", "b", `{"n":2}`, "")
	// The bad one plans a delivery id the good one takes: the multi-row insert fails.
	plan := bad.pub.p.Plan
	bad.pub.p.Plan = func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		d, a, ok := plan(ep)
		d.ID = "dlv_e1_" + ep.ID
		return d, a, ok
	}
	bad.fn = func(q querier) error {
		var err error
		bad.pub.out, err = publish(context.Background(), q, bad.pub.p)
		return err
	}
	h.st.runGroup([]*writeReq{good, bad})
	if p, err := h.result(good); err != nil || !reflect.DeepEqual(deliveryIDs(p), []string{"dlv_e1_ep_3"}) {
		t.Fatalf("good publish: %+v, %v", p, err)
	}
	if _, err := h.result(bad); err == nil {
		t.Fatal("the publish with a taken delivery id succeeded")
	}
	if _, err := h.st.GetEvent(context.Background(), outboxdriver.GetEventParams{Account: "b", ID: "e2"}); !errors.Is(err, outboxdriver.ErrNotFound) {
		t.Fatalf("the failed publish left its event: %v", err)
	}
	var n int
	if err := h.st.db.QueryRow(`SELECT count(*) FROM outbox_events`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d events stored, want 1 (%v)", n, err)
	}
}
