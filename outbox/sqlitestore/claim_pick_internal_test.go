package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// referenceWindowSQL is the claim's window as one statement (the claim before issue
// 28): the first :scan due deliveries, in order, of endpoints that take deliveries and
// have room, with that room. The claim reads it in Go (dueWindow); this is what it
// must pick from.
const referenceWindowSQL = `
WITH busy AS (
    SELECT endpoint_id, count(*) AS n FROM outbox_deliveries
    WHERE lease_until IS NOT NULL GROUP BY endpoint_id
)
SELECT d.id, d.endpoint_id, d.next_attempt_at, e.in_flight_cap - coalesce(b.n, 0) AS room, e.rate_limit, e.rate_tat
FROM outbox_deliveries d
JOIN outbox_endpoints e ON e.id = d.endpoint_id
LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
WHERE d.status = 'PENDING' AND d.lease_until IS NULL AND d.next_attempt_at <= :now
  AND e.status = 'ACTIVE' AND e.removed_at IS NULL
  AND (e.hold_until IS NULL OR e.hold_until <= :now)
  AND e.in_flight_cap > coalesce(b.n, 0)
  AND (e.rate_limit = 0 OR e.rate_tat IS NULL
       OR e.rate_tat <= :now + (e.rate_limit - 1) * ((1000000 + e.rate_limit - 1) / e.rate_limit))
ORDER BY d.next_attempt_at
LIMIT :scan`

func referenceWindow(ctx context.Context, q querier, now int64, scan int) ([]dueRow, error) {
	rows, err := q.QueryContext(ctx, referenceWindowSQL, sql.Named("now", now), sql.Named("scan", scan))
	return sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (dueRow, error) {
		var d dueRow
		if err := r.Scan(&d.id, &d.endpointID, &d.next, &d.room, &d.rateLimit, &d.rateTAT); err != nil {
			return d, err
		}
		if d.rateLimit > 0 {
			d.room = min(d.room, outboxdriver.RateRoom(d.rateLimit, fromNull(d.rateTAT), fromMicros(now)))
		}
		return d, nil
	})
}

// TestClaimPickMatchesFullWindow: the claim picks exactly what the full window
// (4×limit rows of referenceWindowSQL) picks, whatever the limit, with ties of due
// times across the cut, an endpoint at its room, endpoints partly leased, one with a
// rate limit, and a paused and a held endpoint whose due deliveries come first (read and passed over a
// page at a time); and both the short read and the full window serve some of the
// claims.
func TestClaimPickMatchesFullWindow(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, "pick.db", Options{})
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, ep := range []struct {
		id  string
		cap int
	}{{"ep_a", 3}, {"ep_b", 40}, {"ep_c", 1000}, {"ep_p", 1000}, {"ep_h", 1000}, {"ep_r", 1000}} {
		e := outboxdriver.Endpoint{ID: ep.id, Account: "acct", URL: "https://example.com", Events: []string{"*"},
			Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: base, InFlightCap: ep.cap}
		switch ep.id {
		case "ep_p":
			e.Status = outboxdriver.EndpointPaused
		case "ep_h":
			hold := base.Add(time.Hour)
			e.HoldUntil = &hold
		case "ep_r":
			e.RateLimit = 4 // a bucket of 4 limits its room
		}
		if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: e,
			Audit: outboxdriver.AuditEntry{Account: "acct", EndpointID: ep.id, Action: outboxdriver.AuditCreated, At: base}}); err != nil {
			t.Fatal(err)
		}
	}
	// 60 events, each delivered to the three endpoints; due times in steps of 1 µs,
	// three events a step (ties within and across endpoints), ep_c's a step later.
	for i := range 60 {
		ev := outboxdriver.Event{ID: fmt.Sprintf("evt_%02d", i), Account: "acct", Type: "call.status", CreatedAt: base,
			Data: json.RawMessage(`{}`)}
		plan := func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
			next := base.Add(time.Duration(i/3) * time.Microsecond)
			switch ep.ID {
			case "ep_c":
				next = next.Add(time.Microsecond)
			case "ep_p", "ep_h": // ahead of every other: a claim reads past them
				next = base.Add(-time.Second)
			}
			return outboxdriver.Delivery{ID: fmt.Sprintf("dlv_%02d_%s", i, ep.ID), Account: "acct", EventID: ev.ID,
				EventType: ev.Type, EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: next,
				CreatedAt: base, UpdatedAt: base}, nil, true
		}
		if err := st.write(ctx, func(q querier) error {
			_, err := publish(ctx, q, outboxdriver.PublishParams{Event: ev, Now: base, Plan: plan})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	short, full := 0, 0
	check := func(stage string) {
		t.Helper()
		for _, at := range []time.Duration{0, 5 * time.Microsecond, 12 * time.Microsecond, time.Second} {
			now := micros(base.Add(at))
			for limit := 1; limit <= 50; limit++ {
				err := st.write(ctx, func(q querier) error {
					got, err := claimPick(ctx, newDueWindow(q, now, &st.endpointRows), limit)
					if err != nil {
						return err
					}
					window, err := referenceWindow(ctx, q, now, 4*limit)
					if err != nil {
						return err
					}
					head := append([]dueRow(nil), window[:min(len(window), limit+1)]...)
					if len(head) <= limit || head[limit].next > head[limit-1].next && len(pickDue(head[:limit], limit)) == limit {
						short++
					} else {
						full++
					}
					if want := pickDue(window, limit); !reflect.DeepEqual(got, want) {
						t.Errorf("%s, now +%v, limit %d: picked %v, the full window picks %v", stage, at, limit, got, want)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	check("nothing leased")
	// Lease some of each endpoint: ep_a reaches its room sooner.
	if _, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: base.Add(time.Second), LeaseUntil: base.Add(time.Hour),
		Limit: 20, Token: "lease_1"}); err != nil {
		t.Fatal(err)
	}
	check("some leased")
	if short == 0 || full == 0 {
		t.Fatalf("the short read served %d claims and the full window %d: both must be exercised", short, full)
	}
}
