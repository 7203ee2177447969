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

// windowSQL reads due deliveries in the due index's order, after a cursor: the
// index alone answers it (outbox_deliveries_due covers its columns), and its rows
// carry three short columns. A claim filters them by their endpoints in Go
// (dueWindow): the join and the per-endpoint lease counts of one statement cost the
// single writer twice as much, and rows read into Go cost more than rows SQLite
// skips.
const windowSQL = `SELECT id, endpoint_id, next_attempt_at FROM outbox_deliveries
WHERE status = 'PENDING' AND lease_until IS NULL AND next_attempt_at <= :now
  AND (next_attempt_at, endpoint_id, id) > (:next, :endpoint, :id)
ORDER BY next_attempt_at, endpoint_id, id LIMIT :scan`

// busySQL counts the leases of the endpoints listed (a JSON array of ids), on the
// leased index.
const busySQL = `SELECT endpoint_id, count(*) FROM outbox_deliveries
WHERE endpoint_id IN (SELECT value FROM json_each(?)) AND lease_until IS NOT NULL GROUP BY endpoint_id`

// leaseSQL leases the chosen deliveries. The claim's transaction holds the write lock
// since it began, so they are as the window read them.
const leaseSQL = `UPDATE outbox_deliveries SET lease_until = ?, lease_token = ?
WHERE id IN (SELECT value FROM json_each(?)) AND status = 'PENDING' AND lease_until IS NULL
RETURNING ` + deliveryColumns

// dueRow is one delivery of the claim window, with its endpoint's room.
type dueRow struct {
	id, endpointID string
	next           int64
	room           int
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

// claimPick chooses the deliveries a claim of limit leases at now, from the window:
// the due deliveries, earliest first, of endpoints that take deliveries and have room
// under their cap. It reads first the limit+1 earliest, and keeps what pickDue takes
// of the first limit when it takes them all and the next row is due strictly later:
// the full window (4×limit rows) would have given the same pick, since every row past
// the first limit sorts after them. Otherwise (an endpoint at its room, or a tie at
// the cut) it reads on to the full window. A saturated node claims from a backlog,
// where the first read is enough.
func claimPick(ctx context.Context, w *dueWindow, limit int) ([]string, error) {
	if err := w.fill(ctx, limit+1); err != nil {
		return nil, err
	}
	window := w.rows
	if len(window) <= limit {
		// Every due row the full window could hold.
		return pickDue(window, limit), nil
	}
	if window[limit].next > window[limit-1].next {
		if picked := pickDue(slices.Clone(window[:limit]), limit); len(picked) == limit {
			return picked, nil
		}
	}
	if err := w.fill(ctx, 4*limit); err != nil {
		return nil, err
	}
	return pickDue(slices.Clone(w.rows[:min(len(w.rows), 4*limit)]), limit), nil
}

// dueWindow reads the claim's window: due deliveries in order, a page at a time,
// keeping those whose endpoint takes deliveries at now with room under its cap. Each
// endpoint met is read once (whole, for the jobs: endpointsOf is not needed after),
// and its leases counted once.
type dueWindow struct {
	tx  querier
	now int64
	// rows are the eligible rows read, in the window's order.
	rows []dueRow
	// endpoints are those met, by id; nil for one that does not take deliveries
	// now (or is gone).
	endpoints map[string]*windowEndpoint
	// after is the cursor: the last row read (eligible or not).
	afterNext     int64
	afterEndpoint string
	afterID       string
	done          bool
}

type windowEndpoint struct {
	ep   outboxdriver.Endpoint
	room int
}

func newDueWindow(tx querier, now int64) *dueWindow {
	return &dueWindow{tx: tx, now: now, endpoints: map[string]*windowEndpoint{}, afterNext: -1 << 62}
}

// fill reads on until the window holds want rows or the due deliveries end.
func (w *dueWindow) fill(ctx context.Context, want int) error {
	for len(w.rows) < want && !w.done {
		page := want - len(w.rows)
		rows, err := w.tx.QueryContext(ctx, windowSQL, sql.Named("now", w.now), sql.Named("next", w.afterNext),
			sql.Named("endpoint", w.afterEndpoint), sql.Named("id", w.afterID), sql.Named("scan", page))
		if err != nil {
			return fmt.Errorf("sqlitestore: claim: %w", err)
		}
		read, err := sqlrows.Collect(make([]dueRow, 0, page), rows, nil, func(r sqlrows.Row) (dueRow, error) {
			var d dueRow
			err := r.Scan(&d.id, &d.endpointID, &d.next)
			return d, err
		})
		if err != nil {
			return fmt.Errorf("sqlitestore: claim: %w", err)
		}
		if len(read) < page {
			w.done = true
		}
		if len(read) == 0 {
			return nil
		}
		last := read[len(read)-1]
		w.afterNext, w.afterEndpoint, w.afterID = last.next, last.endpointID, last.id
		if err := w.meet(ctx, read); err != nil {
			return err
		}
		for _, d := range read {
			if e := w.endpoints[d.endpointID]; e != nil {
				d.room = e.room
				w.rows = append(w.rows, d)
			}
		}
	}
	return nil
}

// meet reads the endpoints of rows not met yet and counts their leases.
func (w *dueWindow) meet(ctx context.Context, rows []dueRow) error {
	var ids []string
	for _, d := range rows {
		if _, ok := w.endpoints[d.endpointID]; !ok {
			w.endpoints[d.endpointID] = nil
			ids = append(ids, d.endpointID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rs, err := w.tx.QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	eps, err := sqlrows.Collect(nil, rs, err, scanEndpoint)
	if err != nil {
		return err
	}
	rs, err = w.tx.QueryContext(ctx, busySQL, string(list))
	type busy struct {
		id string
		n  int
	}
	counts, err := sqlrows.Collect(nil, rs, err, func(r sqlrows.Row) (busy, error) {
		var b busy
		err := r.Scan(&b.id, &b.n)
		return b, err
	})
	if err != nil {
		return err
	}
	leased := make(map[string]int, len(counts))
	for _, c := range counts {
		leased[c.id] = c.n
	}
	for _, ep := range eps {
		held := ep.HoldUntil != nil && micros(*ep.HoldUntil) > w.now
		room := ep.InFlightCap - leased[ep.ID]
		if ep.Status == outboxdriver.EndpointActive && ep.RemovedAt == nil && !held && room > 0 {
			w.endpoints[ep.ID] = &windowEndpoint{ep: ep, room: room}
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

// claimIn makes one claim on tx: it reads the window (and each endpoint met, once),
// picks from it (pickDue), leases the pick with one UPDATE that returns the
// deliveries, and reads their events in one query.
func claimIn(ctx context.Context, tx querier, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p = p.Reserved(); p.Limit <= 0 {
		return nil, nil
	}
	w := newDueWindow(tx, micros(p.Now))
	picked, err := claimPick(ctx, w, p.Limit)
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
	jobs := make([]outboxdriver.Job, 0, len(claimed))
	for _, d := range claimed {
		// The window read each endpoint in this transaction.
		e := w.endpoints[d.EndpointID]
		ev, ok := events[eventKey(d.Account, d.EventID)]
		if !ok || e == nil {
			// A row gone from under its delivery cannot be attempted: its lease
			// expires and the reaper decides it, as for a crashed claimer.
			continue
		}
		jobs = append(jobs, outboxdriver.Job{Delivery: d, Endpoint: e.ep, Event: ev, Token: p.Token})
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
		if err := b.loadLeased(ctx, outcomes); err != nil {
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
