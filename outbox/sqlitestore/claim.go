package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// claimPick chooses the deliveries a claim of limit leases at now, from the window:
// the due deliveries, earliest first, of endpoints that take deliveries and have room
// under their cap and in their rate limit's bucket. It reads first the limit+1 earliest, and keeps what pickDue takes
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
// keeping those whose endpoint takes deliveries at now with room under its cap and
// in its rate limit's bucket. Each endpoint met is looked at once (meetSQL: its
// version, status, hold, cap and bucket), its leases counted once, and read whole
// (for the jobs) only when its version is not one read before (endpointRows).
type dueWindow struct {
	tx    querier
	now   int64
	known *endpointRows
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
	ep        outboxdriver.Endpoint
	room      int
	rateLimit int
	rateTAT   sql.NullInt64
}

func newDueWindow(tx querier, now int64, known *endpointRows) *dueWindow {
	return &dueWindow{tx: tx, now: now, known: known, endpoints: map[string]*windowEndpoint{}, afterNext: -1 << 62}
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
				d.room, d.rateLimit, d.rateTAT = e.room, e.rateLimit, e.rateTAT
				w.rows = append(w.rows, d)
			}
		}
	}
	return nil
}

// meetSQL reads what a claim needs to know of the endpoints listed (a JSON array of
// ids): their version, whether they take deliveries at :now, their cap and their rate
// limit's bucket.
const meetSQL = `SELECT id, version, status = 'ACTIVE' AND removed_at IS NULL AND (hold_until IS NULL OR hold_until <= :now),
	in_flight_cap, rate_limit, rate_tat FROM outbox_endpoints WHERE id IN (SELECT value FROM json_each(:ids))`

// meet looks at the endpoints of rows not met yet: those that take deliveries get
// their room (their cap less their leases) and their row, from endpointRows when
// their version was read before, else read whole.
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
	type looked struct {
		id               string
		version          int64
		takes            bool
		limit, rateLimit int
		rateTAT          sql.NullInt64
	}
	rs, err := w.tx.QueryContext(ctx, meetSQL, sql.Named("now", w.now), sql.Named("ids", string(list)))
	seen, err := sqlrows.Collect(nil, rs, err, func(r sqlrows.Row) (looked, error) {
		var l looked
		err := r.Scan(&l.id, &l.version, &l.takes, &l.limit, &l.rateLimit, &l.rateTAT)
		return l, err
	})
	if err != nil {
		return err
	}
	var takers, unknown []string
	bucket := map[string]int{} // room in the rate limit's bucket, of limited endpoints
	for _, l := range seen {
		if l.rateLimit > 0 {
			bucket[l.id] = outboxdriver.RateRoom(l.rateLimit, fromNull(l.rateTAT), fromMicros(w.now))
		}
		if !l.takes || l.limit <= 0 || l.rateLimit > 0 && bucket[l.id] <= 0 {
			continue
		}
		takers = append(takers, l.id)
		e := &windowEndpoint{room: l.limit, rateLimit: l.rateLimit, rateTAT: l.rateTAT}
		if ep, ok := w.known.get(l.id, l.version); ok {
			e.ep = ep
		} else {
			unknown = append(unknown, l.id)
		}
		w.endpoints[l.id] = e
	}
	if len(takers) == 0 {
		return nil
	}
	if len(unknown) > 0 {
		list, err := json.Marshal(unknown)
		if err != nil {
			return err
		}
		rs, err := w.tx.QueryContext(ctx, `SELECT version, `+endpointColumns+` FROM outbox_endpoints
			WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		read, err := sqlrows.Collect(nil, rs, err, func(r sqlrows.Row) (versionedEndpoint, error) {
			var (
				v  versionedEndpoint
				sc endpointScan
			)
			if err := r.Scan(append([]any{&v.version}, sc.Dest()...)...); err != nil {
				return v, err
			}
			v.ep, err = sc.endpoint()
			return v, err
		})
		if err != nil {
			return err
		}
		for _, v := range read {
			w.known.put(v)
			if e := w.endpoints[v.ep.ID]; e != nil {
				e.ep = v.ep
			}
		}
	}
	list, err = json.Marshal(takers)
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
	for _, c := range counts {
		if e := w.endpoints[c.id]; e != nil {
			e.room -= c.n
		}
	}
	for _, id := range takers {
		e := w.endpoints[id]
		if b, limited := bucket[id]; limited {
			e.room = min(e.room, b)
		}
		if e.room <= 0 {
			w.endpoints[id] = nil // at its cap
		}
	}
	return nil
}

// endpointRows keeps the endpoint rows claims read, each with its version
// (migration 0008: every insert and update gives the row a new random version), so
// that a claim reads an endpoint it met before through meetSQL's few columns alone.
// It is safe for concurrent use; the endpoints it returns are the caller's own (their
// slices copied).
type endpointRows struct {
	mu sync.Mutex
	m  map[string]versionedEndpoint
}

type versionedEndpoint struct {
	version int64
	ep      outboxdriver.Endpoint
}

// maxKnownEndpoints bounds endpointRows: past it, it starts again empty.
const maxKnownEndpoints = 10_000

func (k *endpointRows) get(id string, version int64) (outboxdriver.Endpoint, bool) {
	k.mu.Lock()
	v, ok := k.m[id]
	k.mu.Unlock()
	if !ok || v.version != version {
		return outboxdriver.Endpoint{}, false
	}
	ep := v.ep
	ep.Events, ep.Secrets = slices.Clone(ep.Events), slices.Clone(ep.Secrets)
	return ep, true
}

func (k *endpointRows) put(v versionedEndpoint) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKnownEndpoints {
		k.m = make(map[string]versionedEndpoint)
	}
	v.ep.Events, v.ep.Secrets = slices.Clone(v.ep.Events), slices.Clone(v.ep.Secrets)
	k.m[v.ep.ID] = v
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
		jobs, err = s.claimIn(ctx, tx, p)
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
func (s *Store) claimIn(ctx context.Context, tx querier, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	if p = p.Reserved(); p.Limit <= 0 {
		return nil, nil
	}
	w := newDueWindow(tx, micros(p.Now), &s.endpointRows)
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
	if err := takeRate(ctx, tx, w.rows, claimed, micros(p.Now)); err != nil {
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
		jobs, err = s.claimIn(ctx, tx, next)
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
