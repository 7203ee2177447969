package sqlitestore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// listingFilters are the filters of an endpoint's delivery log (GET
// /api/v1/webhooks/{id}/deliveries), alone and together, each with the index its
// listing must walk.
var listingFilters = []struct {
	name  string
	q     outboxdriver.DeliveryQuery
	index string
}{
	{"none", outboxdriver.DeliveryQuery{}, "outbox_deliveries_endpoint_listing"},
	{"type", outboxdriver.DeliveryQuery{Type: "call.status"}, "outbox_deliveries_endpoint_listing"},
	{"cursor", outboxdriver.DeliveryQuery{BeforeID: "dlv_x"}, "outbox_deliveries_endpoint_listing"},
	{"SUCCEEDED", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliverySucceeded}, "outbox_deliveries_endpoint_listing"},
	{"PENDING", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryPending}, "outbox_deliveries_endpoint_waiting"},
	{"FAILED", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryFailed}, "outbox_deliveries_endpoint_failed"},
	{"DEAD", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryDead}, "outbox_deliveries_endpoint_dead"},
	{"DROPPED", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryDropped}, "outbox_deliveries_endpoint_dropped"},
	{"FAILED type cursor", outboxdriver.DeliveryQuery{Status: outboxdriver.DeliveryFailed, Type: "call.status", BeforeID: "dlv_x"}, "outbox_deliveries_endpoint_failed"},
	{"eventId", outboxdriver.DeliveryQuery{EventID: "evt_1"}, "outbox_deliveries_event"},
	{"eventId status", outboxdriver.DeliveryQuery{EventID: "evt_1", Status: outboxdriver.DeliveryDead}, "outbox_deliveries_event"},
}

// TestEndpointListingPlans: every filter of an endpoint's newest-first listing walks
// an index that starts at that endpoint (or at the event) in the listing's order, so
// its cost is the rows it returns, whatever the account holds (docs/outbox.md §5): no
// scan of the account's index, no sort of the endpoint's rows. The plans are SQLite's
// own, read with EXPLAIN QUERY PLAN; BenchmarkEndpointListing times them at 1M rows.
func TestEndpointListingPlans(t *testing.T) {
	s := openTest(t, "plan.db", Options{})
	for _, f := range listingFilters {
		q := f.q
		q.Account, q.EndpointID, q.Limit = "acct", "ep_1", 50
		query, args := listDeliveriesSQL(q)
		plan, err := queryPlan(s.db, query, args...)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		text := strings.Join(plan, "; ")
		if f.q.Status == outboxdriver.DeliveryPending {
			// Two walks merged: the waiting deliveries' index, newest first, its
			// page sorted again with the few leased ones.
			if !strings.Contains(text, "INDEX "+f.index+" (endpoint_id=?") || !strings.Contains(text, "INDEX outbox_deliveries_leased (endpoint_id=?") {
				t.Errorf("%s: plan %q, want the walks of %s and outbox_deliveries_leased", f.name, text, f.index)
			}
		} else if !strings.Contains(plan[0], "INDEX "+f.index+" ") {
			// The first line is the walk of the listing itself; the cursor's lookup
			// of its row comes after.
			t.Errorf("%s: plan %q, want the walk of %s", f.name, text, f.index)
		}
		if strings.Contains(text, "SCAN outbox_deliveries") {
			t.Errorf("%s: plan %q walks the account's deliveries", f.name, text)
		}
		if f.q.EventID == "" && f.q.Status != outboxdriver.DeliveryPending && strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s: plan %q sorts the endpoint's rows", f.name, text)
		}
	}
}

// BenchmarkEndpointListing lists the newest 50 deliveries of an endpoint holding
// 0.1 % of an account's 1M deliveries, with each filter. The issue that asked for
// the listing indexes measured 37 ms without a filter and 57-72 ms with a status
// filter before them; the target is under 5 ms (docs/outbox.md §5).
func BenchmarkEndpointListing(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, "listing.db", Options{Synchronous: "NORMAL"})
	const total, mine = 1_000_000, 1_000
	// One statement: 1M deliveries over 1000 endpoints of one account, ep_0 holding
	// every 1000th; statuses and types vary so that each filter finds some of ep_0's.
	_, err := s.db.ExecContext(ctx, fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
		INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status, next_attempt_at, created_at, updated_at)
		SELECT printf('dlv_%%09d', i), 'acct', printf('evt_%%09d', i / 3), CASE i %% 7 WHEN 0 THEN 'call.status' ELSE 'other' END,
			printf('ep_%%d', i %% 1000),
			CASE (i / 1000) %% 10 WHEN 0 THEN 'PENDING' WHEN 1 THEN 'FAILED' WHEN 2 THEN 'DEAD' WHEN 3 THEN 'DROPPED' ELSE 'SUCCEEDED' END,
			i, i, i FROM n`, total-1))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM outbox_deliveries WHERE endpoint_id = 'ep_0'`).Scan(&n); err != nil || n != mine {
		b.Fatalf("ep_0 holds %d deliveries, %v", n, err)
	}
	for _, f := range listingFilters {
		b.Run(f.name, func(b *testing.B) {
			q := f.q
			q.Account, q.EndpointID, q.Limit = "acct", "ep_0", 50
			switch {
			case q.BeforeID != "":
				q.BeforeID = "dlv_000500000"
			case q.EventID != "":
				q.EventID = "evt_000000000"
			}
			for b.Loop() {
				if _, err := s.ListDeliveries(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
