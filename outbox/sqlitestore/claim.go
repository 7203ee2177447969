package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/deliverybatch"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// claimSQL reads the window of due deliveries a claim chooses from. It walks the due
// index in order and skips endpoints that are paused, disabled, removed, held or
// already at their in-flight cap, with each one's room left under its cap. The window
// is a multiple of the batch so that one endpoint's backlog cannot fill it. The
// claim ranks the window per endpoint in Go (pickDue): a window function and the
// temporary tables of a single UPDATE statement cost several times more.
const claimSQL = `
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

// leaseSQL leases the chosen deliveries. The claim's transaction holds the write lock
// since it began, so they are as the window read them.
const leaseSQL = `UPDATE outbox_deliveries SET lease_until = ?, lease_token = ?
WHERE id IN (SELECT value FROM json_each(?)) AND status = 'PENDING' AND lease_until IS NULL
RETURNING ` + deliveryColumns

// dueRow is one delivery of the claim window. room is what its endpoint may take: under
// its in-flight cap and, when rateLimit is set, the room its bucket has (rateTAT).
type dueRow struct {
	id, endpointID string
	next           int64
	room           int
	rateLimit      int
	rateTAT        sql.NullInt64
}

// pickDue chooses up to limit deliveries of the window, earliest first (then by id),
// taking no more of an endpoint than its room.
func pickDue(window []dueRow, limit int) []string {
	slices.SortFunc(window, func(a, b dueRow) int {
		if a.next != b.next {
			return cmp.Compare(a.next, b.next)
		}
		return strings.Compare(a.id, b.id)
	})
	taken := map[string]int{}
	var ids []string
	for _, r := range window {
		if len(ids) == limit {
			break
		}
		if taken[r.endpointID] < r.room {
			taken[r.endpointID]++
			ids = append(ids, r.id)
		}
	}
	return ids
}

// claimPick chooses the deliveries a claim of limit leases at now. It reads first the
// limit+1 earliest due rows, and keeps what pickDue takes of the first limit when it
// takes them all and the next row is due strictly later: the full window (4×limit
// rows) would have given the same pick, since every row past the first limit sorts
// after them. Otherwise (an endpoint at its room, or a tie at the cut) it reads the
// full window. A saturated node claims from a backlog, where the first read is
// enough; the window join costs the single writer per row read.
func claimPick(ctx context.Context, tx querier, now int64, limit int) ([]string, []dueRow, error) {
	window, err := claimWindow(ctx, tx, now, limit+1)
	if err != nil {
		return nil, nil, err
	}
	if len(window) <= limit {
		// Every due row the full window could hold.
		return pickDue(window, limit), window, nil
	}
	if window[limit].next > window[limit-1].next {
		if picked := pickDue(window[:limit], limit); len(picked) == limit {
			return picked, window, nil
		}
	}
	if window, err = claimWindow(ctx, tx, now, 4*limit); err != nil {
		return nil, nil, err
	}
	return pickDue(window, limit), window, nil
}

// claimWindow reads up to scan rows of claimSQL, in its order (next_attempt_at).
func claimWindow(ctx context.Context, tx querier, now int64, scan int) ([]dueRow, error) {
	rows, err := tx.QueryContext(ctx, claimSQL, sql.Named("now", now), sql.Named("scan", scan))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: claim: %w", err)
	}
	return sqlrows.Collect(make([]dueRow, 0, scan), rows, nil, func(r sqlrows.Row) (dueRow, error) {
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

// takeRate takes the claimed deliveries of rate-limited endpoints from their buckets
// (outboxdriver.RateAfter), in the claim's transaction.
func takeRate(ctx context.Context, tx querier, window []dueRow, claimed []outboxdriver.Delivery, now int64) error {
	limited := map[string]dueRow{}
	for _, r := range window {
		if r.rateLimit > 0 {
			limited[r.endpointID] = r
		}
	}
	if len(limited) == 0 {
		return nil
	}
	taken := map[string]int{}
	for _, d := range claimed {
		if _, ok := limited[d.EndpointID]; ok {
			taken[d.EndpointID]++
		}
	}
	for id, n := range taken {
		r := limited[id]
		tat := outboxdriver.RateAfter(r.rateLimit, fromNull(r.rateTAT), fromMicros(now), n)
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_endpoints SET rate_tat = ? WHERE id = ?`, micros(tat), id); err != nil {
			return fmt.Errorf("sqlitestore: rate limit: %w", err)
		}
	}
	return nil
}

// Claim implements outboxdriver.Store.
func (s *Store) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var jobs []outboxdriver.Job
	err := s.write(ctx, func(tx querier) error {
		var err error
		jobs, err = claimIn(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// claimIn makes one claim on tx: it reads the window, picks from it (pickDue), leases
// the pick with one UPDATE that returns the deliveries, reads their events in one
// query and each endpoint once.
func claimIn(ctx context.Context, tx querier, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p = p.Reserved(); p.Limit <= 0 {
		return nil, nil
	}
	picked, window, err := claimPick(ctx, tx, micros(p.Now), p.Limit)
	if err != nil || len(picked) == 0 {
		return nil, err
	}
	list, err := json.Marshal(picked)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, leaseSQL, micros(p.LeaseUntil), p.Token, string(list))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: claim: %w", err)
	}
	claimed, err := sqlrows.Collect(nil, rows, nil, scanDelivery)
	if err != nil || len(claimed) == 0 {
		return nil, err
	}
	if err := takeRate(ctx, tx, window, claimed, micros(p.Now)); err != nil {
		return nil, err
	}
	slices.SortFunc(claimed, func(a, b outboxdriver.Delivery) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	events, err := eventsOf(ctx, tx, claimed)
	if err != nil {
		return nil, err
	}
	endpoints, err := endpointsOf(ctx, tx, claimed)
	if err != nil {
		return nil, err
	}
	jobs := make([]outboxdriver.Job, 0, len(claimed))
	for _, d := range claimed {
		ep, epOK := endpoints[d.EndpointID]
		ev, ok := events[eventKey(d.Account, d.EventID)]
		if !ok || !epOK {
			// A row gone from under its delivery cannot be attempted: its lease
			// expires and the reaper decides it, as for a crashed claimer.
			continue
		}
		jobs = append(jobs, outboxdriver.Job{Delivery: d, Endpoint: ep, Event: ev, Token: p.Token})
	}
	return jobs, nil
}

// eventKey identifies an event: its id is unique within its account (migration 0004).
func eventKey(account, id string) string { return account + "\x00" + id }

// eventsOf reads the events of deliveries in one query, by eventKey.
func eventsOf(ctx context.Context, tx querier, ds []outboxdriver.Delivery) (map[string]outboxdriver.Event, error) {
	keys := make([][2]string, len(ds))
	for i, d := range ds {
		keys[i] = [2]string{d.Account, d.EventID}
	}
	list, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM outbox_events
		WHERE (account, id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`, string(list))
	evs, err := sqlrows.Collect(nil, rows, err, scanEvent)
	if err != nil {
		return nil, err
	}
	out := make(map[string]outboxdriver.Event, len(evs))
	for _, ev := range evs {
		out[eventKey(ev.Account, ev.ID)] = ev
	}
	return out, nil
}

// endpointsOf reads the endpoints of deliveries in one query, by id. The deliveries
// of a claim often have an endpoint each (an event fans out to all of its account's
// endpoints): a query per endpoint was about half the time of a claim of 100.
func endpointsOf(ctx context.Context, tx querier, ds []outboxdriver.Delivery) (map[string]outboxdriver.Endpoint, error) {
	ids := make([]string, 0, len(ds))
	seen := make(map[string]bool, len(ds))
	for _, d := range ds {
		if !seen[d.EndpointID] {
			seen[d.EndpointID] = true
			ids = append(ids, d.EndpointID)
		}
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	eps, err := sqlrows.Collect(nil, rows, err, scanEndpoint)
	if err != nil {
		return nil, err
	}
	out := make(map[string]outboxdriver.Endpoint, len(eps))
	for _, ep := range eps {
		out[ep.ID] = ep
	}
	return out, nil
}

// NextDue implements outboxdriver.Store.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) {
	var v sql.NullInt64
	err := s.read().QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM outbox_deliveries
		WHERE status = 'PENDING' AND lease_until IS NULL`).Scan(&v)
	if err != nil || !v.Valid {
		return time.Time{}, false, err
	}
	return fromMicros(v.Int64), true, nil
}

// Complete implements outboxdriver.Store. The batch costs a few statements whatever its
// size: see batchApplier.
func (s *Store) Complete(ctx context.Context, outcomes []outboxdriver.Completion) ([]bool, error) {
	applied, _, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: outcomes})
	return applied, err
}

// CompleteClaim implements outboxdriver.Store.
func (s *Store) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	outcomes, next := p.Outcomes, p.Next
	applied := make([]bool, len(outcomes))
	var jobs []outboxdriver.Job
	err := s.write(ctx, func(tx querier) error {
		clear(applied)
		b := newBatchApplier(tx)
		if err := b.load(ctx, deliverybatch.IDs(outcomes)); err != nil {
			return err
		}
		if err := deliverybatch.Complete(ctx, &b.Batch, b, outcomes, applied); err != nil {
			return err
		}
		if next.Limit <= 0 {
			return nil
		}
		var err error
		jobs, err = claimIn(ctx, tx, next)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return applied, jobs, nil
}

// Reap implements outboxdriver.Store.
func (s *Store) Reap(ctx context.Context, p outboxdriver.ReapParams) (int, error) {
	now, limit, decide := p.Now, p.Limit, p.Decide
	n := 0
	err := s.write(ctx, func(tx querier) error {
		n = 0
		ids, err := queryIDs(ctx, tx, `SELECT id FROM outbox_deliveries
			WHERE lease_until IS NOT NULL AND lease_until < ? AND status = 'PENDING'
			ORDER BY lease_until LIMIT ?`, micros(now), limit)
		if err != nil {
			return err
		}
		b := newBatchApplier(tx)
		if err := b.load(ctx, ids); err != nil {
			return err
		}
		n, err = deliverybatch.Reap(ctx, &b.Batch, b, ids, decide)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
