package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// claimSQL claims in one statement (docs/outbox.md §5), as river's JobGetAvailable:
//
//   - due: a window of due deliveries, earliest first, on endpoints that take
//     deliveries (as of the statement's snapshot), locked FOR UPDATE SKIP LOCKED so
//     that concurrent claims on any node take disjoint rows. The window is a multiple
//     of the batch so that one endpoint's backlog does not fill it.
//   - open: their endpoints, locked FOR NO KEY UPDATE SKIP LOCKED, with the room
//     left under each one's cap. A locked row is read in its latest version: status,
//     hold and in_flight as the last claim, completion or publish lease committed them.
//     An endpoint another claim or completion holds is skipped (this one does not
//     wait; the holder claims for it or commits soon).
//   - picked: per endpoint no more than its room, earliest first, Limit in all.
//   - leased, counted: the leases and the endpoints' in-flight counts.
//
// An endpoint's rate limit (outboxdriver.RateRoom) is kept under the same lock as its
// in-flight count: open reads its bucket in its latest version and counts the room it
// has, and counted takes the leases from it (outboxdriver.RateAfter), in microseconds
// as the engine computes them.
//
// $1 is the time (NULL: the database's now()), $2 the window, $3 the limit, $4 the
// lease's length from that time, $5 the token.
var claimSQL = `
WITH due AS (
    SELECT d.id, d.endpoint_id, d.next_attempt_at
    FROM outbox_deliveries d JOIN outbox_endpoints e ON e.id = d.endpoint_id
    WHERE d.status = 'PENDING' AND d.lease_until IS NULL
      AND d.next_attempt_at <= coalesce($1::timestamptz, now())
      AND e.status = 'ACTIVE' AND e.removed_at IS NULL AND e.in_flight < e.in_flight_cap
      AND (e.hold_until IS NULL OR e.hold_until <= coalesce($1::timestamptz, now()))
      AND ` + rateOpen("e.") + `
    ORDER BY d.next_attempt_at, d.id
    LIMIT $2
    FOR UPDATE OF d SKIP LOCKED
), open AS (
    SELECT ` + endpointColumns + `, least(in_flight_cap - in_flight, ` + rateRoom + `) AS room
    FROM outbox_endpoints
    WHERE id IN (SELECT endpoint_id FROM due)
      AND status = 'ACTIVE' AND removed_at IS NULL AND in_flight < in_flight_cap
      AND (hold_until IS NULL OR hold_until <= coalesce($1::timestamptz, now()))
      AND ` + rateOpen("") + `
    FOR NO KEY UPDATE SKIP LOCKED
), ranked AS (
    SELECT due.id, due.endpoint_id, due.next_attempt_at, open.room,
        row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS n
    FROM due JOIN open ON open.id = due.endpoint_id
), picked AS (
    SELECT id, endpoint_id FROM ranked WHERE n <= room ORDER BY next_attempt_at, id LIMIT $3
), leased AS (
    UPDATE outbox_deliveries d SET lease_until = coalesce($1::timestamptz, now()) + $4::interval, lease_token = $5
    FROM picked WHERE d.id = picked.id
    RETURNING d.*
), counted AS (
    UPDATE outbox_endpoints e SET in_flight = e.in_flight + c.n,
        rate_tat = CASE WHEN e.rate_limit > 0
            THEN greatest(e.rate_tat, coalesce($1::timestamptz, now())) + c.n * ` + rateInterval("e.") + `
            ELSE e.rate_tat END
    FROM (SELECT endpoint_id, count(*) AS n FROM leased GROUP BY endpoint_id) c
    WHERE e.id = c.endpoint_id
)
SELECT ` + leasedColumns + `, ` + jobEventColumns + `, ` + jobEndpointColumns + `
FROM leased d JOIN outbox_events v ON v.account = d.account AND v.id = d.event_id JOIN open e ON e.id = d.endpoint_id
ORDER BY d.next_attempt_at, d.id`

// rateInterval is outboxdriver.RateInterval of the rate_limit of the endpoint
// columns prefixed with p: one second over it, rounded up to the microsecond.
func rateInterval(p string) string {
	return `(((1000000 + ` + p + `rate_limit - 1) / ` + p + `rate_limit) * interval '1 microsecond')`
}

// rateOpen is true when the endpoint (columns prefixed with p) has room under its
// rate limit at $1: its bucket's tat is no later than the tolerance of a full bucket.
func rateOpen(p string) string {
	return `(` + p + `rate_limit = 0 OR ` + p + `rate_tat IS NULL
       OR ` + p + `rate_tat <= coalesce($1::timestamptz, now()) + (` + p + `rate_limit - 1) * ` + rateInterval(p) + `)`
}

// rateRoom is outboxdriver.RateRoom of an endpoint row at $1, in_flight_cap when it
// has no rate limit (the cap bounds it anyway).
var rateRoom = `CASE WHEN rate_limit = 0 THEN in_flight_cap ELSE least(rate_limit, floor(
    (extract(epoch FROM coalesce($1::timestamptz, now()) - greatest(rate_tat, coalesce($1::timestamptz, now()))) * 1000000
     + (rate_limit - 1) * ((1000000 + rate_limit - 1) / rate_limit)) / ((1000000 + rate_limit - 1) / rate_limit))::int + 1) END`

var (
	leasedColumns      = prefixed("d.", deliveryColumns)
	jobEventColumns    = prefixed("v.", eventColumns)
	jobEndpointColumns = prefixed("e.", endpointColumns)
)

// prefixed qualifies every column of a list with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// Claim implements outboxdriver.Store, in one statement.
func (s *Store) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var jobs []outboxdriver.Job
	err := s.write(ctx, func(q querier) error {
		var err error
		jobs, err = s.claimIn(ctx, q, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// claimIn runs the claim statement on q.
func (s *Store) claimIn(ctx context.Context, q querier, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p = p.Reserved(); p.Limit <= 0 {
		return nil, nil
	}
	rs, err := q.query(ctx, s.q(claimSQL), s.now(p.Now), 4*p.Limit, p.Limit, p.LeaseUntil.Sub(p.Now), p.Token)
	if err != nil {
		return nil, fmt.Errorf("pgstore: claim: %w", err)
	}
	defer rs.Close()
	var jobs []outboxdriver.Job
	endpoints := map[string]outboxdriver.Endpoint{}
	for rs.Next() {
		var (
			ds deliveryScan
			vs eventScan
			es endpointScan
		)
		if err := rs.Scan(slices.Concat(ds.Dest(), vs.Dest(), es.Dest())...); err != nil {
			return nil, err
		}
		d := ds.delivery()
		ep, ok := endpoints[d.EndpointID]
		if !ok {
			if ep, err = es.endpoint(); err != nil {
				return nil, err
			}
			endpoints[d.EndpointID] = ep
		}
		ev, err := vs.event()
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, outboxdriver.Job{Delivery: d, Event: ev, Endpoint: ep, Token: p.Token})
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: claim: %w", err)
	}
	return jobs, nil
}

// NextDue implements outboxdriver.Store: the first entry of the due index.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) {
	var t *time.Time
	err := s.read().queryRow(ctx, s.q(`SELECT min(next_attempt_at) FROM outbox_deliveries
		WHERE status = 'PENDING' AND lease_until IS NULL`)).Scan(&t)
	if err != nil || t == nil {
		return time.Time{}, false, err
	}
	return utc(*t), true, nil
}
