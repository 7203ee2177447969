package outboxtest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// The helpers of the contract cases (contracts_*.go): each case checks sentences of
// outboxdriver.Store's doc comments that the older cases leave unchecked.

// errDecide is the error the contract cases' decisions fail with.
var errDecide = errors.New("decision refused")

// publishWith stores an event of account created at created, stored at now, planned by
// plan, and returns what Publish returned.
func publishWith(t *testing.T, s outboxdriver.Store, account, id string, created, now time.Time, plan func(ev outboxdriver.Event) outboxdriver.PlanFunc) outboxdriver.Published {
	t.Helper()
	ev := outboxdriver.Event{ID: id, Account: account, Type: "call.status", CreatedAt: created, Data: json.RawMessage(`{"n":1}`)}
	pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: now, Plan: plan(ev)})
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// setStatus makes delivery id of account finish with status through UpdateDelivery,
// recording one attempt.
func setStatus(t *testing.T, s outboxdriver.Store, account, id string, status outboxdriver.DeliveryStatus, at time.Time) outboxdriver.Delivery {
	t.Helper()
	d, err := s.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: account, ID: id, Decide: func(d outboxdriver.Delivery, _ outboxdriver.Endpoint) (outboxdriver.Change, error) {
		ch := attemptChange(d, at, at)
		ch.Delivery.Status = status
		return ch, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// snapshot is what a store shows of one account: enough to tell that a call that
// failed changed nothing.
type snapshot struct {
	Endpoints  []outboxdriver.Endpoint
	Events     []outboxdriver.Event
	Deliveries []outboxdriver.Delivery
	Attempts   map[string][]outboxdriver.Attempt
	Audit      []outboxdriver.AuditEntry
}

func takeSnapshot(t *testing.T, s outboxdriver.Store, account string) snapshot {
	t.Helper()
	var sn snapshot
	var err error
	if sn.Endpoints, err = s.ListEndpoints(ctx, account); err != nil {
		t.Fatal(err)
	}
	if sn.Events, err = s.ListEvents(ctx, outboxdriver.EventQuery{Account: account, Limit: 1000}); err != nil {
		t.Fatal(err)
	}
	if sn.Deliveries, err = s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: account, Limit: 1000}); err != nil {
		t.Fatal(err)
	}
	sn.Attempts = map[string][]outboxdriver.Attempt{}
	for _, d := range sn.Deliveries {
		_, as := getDelivery(t, s, account, d.ID)
		sn.Attempts[d.ID] = as
	}
	if sn.Audit, err = s.ListAudit(ctx, outboxdriver.ListAuditParams{Account: account, Limit: 1000}); err != nil {
		t.Fatal(err)
	}
	return sn
}

// requireUnchanged fails unless account shows what before showed.
func requireUnchanged(t *testing.T, s outboxdriver.Store, account string, before snapshot, what string) {
	t.Helper()
	after := takeSnapshot(t, s, account)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("%s changed account %s:\nbefore %+v\n after %+v", what, account, before, after)
	}
}

// deliveryIDs lists the ids of deliveries, in order.
func deliveryIDs(ds []outboxdriver.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func eventIDs(evs []outboxdriver.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

// notFoundOrEmpty reports whether a listing answered ErrNotFound or nothing: what a
// cursor naming a row the account cannot see may give, never another's rows.
func notFoundOrEmpty(n int, err error) bool {
	return errors.Is(err, outboxdriver.ErrNotFound) || err == nil && n == 0
}

// walkPages reads a keyset-paged listing to its end, 100 pages at most: page reads
// the next page, of at most limit rows, and after moves the listing's key past the
// last row of a page.
func walkPages[Row any](t *testing.T, limit int, page func() ([]Row, error), after func(last Row)) []Row {
	t.Helper()
	var all []Row
	for range 100 {
		rows, err := page()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > limit {
			t.Fatalf("page of %d over limit %d", len(rows), limit)
		}
		if len(rows) == 0 {
			return all
		}
		all = append(all, rows...)
		after(rows[len(rows)-1])
	}
	t.Fatal("paging does not end")
	return nil
}
