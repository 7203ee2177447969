package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func getDelivery(ctx context.Context, q querier, id string) (outboxdriver.Delivery, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM outbox_deliveries WHERE id = ?`, id), scanDelivery, "delivery", id)
}

// queryDeliveries runs query, which selects deliveryColumns.
func queryDeliveries(ctx context.Context, q querier, query string, args ...any) ([]outboxdriver.Delivery, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	return sqlrows.Collect(nil, rows, err, scanDelivery)
}

// GetDelivery implements outboxdriver.Store.
func (s *Store) GetDelivery(ctx context.Context, p outboxdriver.GetDeliveryParams) (outboxdriver.Delivery, []outboxdriver.Attempt, error) {
	account, id := p.Account, p.ID
	d, err := getDelivery(ctx, s.read(), id)
	if err != nil {
		return outboxdriver.Delivery{}, nil, err
	}
	if d.Account != account {
		return outboxdriver.Delivery{}, nil, notFound("delivery", id)
	}
	// Its attempts: the earlier ones in outbox_attempts, the latest in its row.
	rows, err := s.read().QueryContext(ctx, `SELECT `+attemptColumns+` FROM outbox_attempts WHERE delivery_id = ?
		UNION ALL SELECT id, `+latestAttemptColumns+` FROM outbox_deliveries WHERE id = ? AND attempt_number IS NOT NULL
		ORDER BY number`, id, id)
	attempts, err := sqlrows.Collect(nil, rows, err, scanAttempt)
	if err != nil {
		return outboxdriver.Delivery{}, nil, err
	}
	return d, attempts, nil
}

// listingIndexes name the index an endpoint's listing walks for each status filter
// (migrations 0005, 0007): the partial index of a state, repeated as a literal in
// the query so that SQLite may use it. PENDING has two: the waiting deliveries' and
// the leased ones' (listPendingSQL).
var listingIndexes = map[outboxdriver.DeliveryStatus]string{
	outboxdriver.DeliveryFailed:  "outbox_deliveries_endpoint_failed",
	outboxdriver.DeliveryDead:    "outbox_deliveries_endpoint_dead",
	outboxdriver.DeliveryDropped: "outbox_deliveries_endpoint_dropped",
}

// listDeliveriesSQL builds the query of one endpoint's listing, or of an event's
// deliveries, and its arguments. An endpoint's listing names its index: without
// statistics SQLite may choose another, reading the deliveries of the account's other
// endpoints. An event id filter walks the event's few deliveries; a status filter the
// partial index of that state; any other the endpoint's index, in the listing's order.
// An account's listing merges those of its endpoints (listAccount).
func listDeliveriesSQL(q outboxdriver.DeliveryQuery) (string, []any) {
	if q.EndpointID != "" && q.EventID == "" && q.Status == outboxdriver.DeliveryPending {
		return listPendingSQL(q)
	}
	from := `FROM outbox_deliveries`
	where := `WHERE account = ?`
	args := []any{q.Account}
	status := string(q.Status)
	if q.EndpointID != "" {
		index, literal := "outbox_deliveries_endpoint_listing", false
		switch name, ok := listingIndexes[q.Status]; {
		case q.EventID != "":
			index = "outbox_deliveries_event"
		case ok:
			index, literal = name, true
		}
		from += ` INDEXED BY ` + index
		if literal {
			// A delivery status, checked by the engine (and by the map above).
			where += ` AND status = '` + status + `'`
			status = ""
		}
	}
	filters, fargs := listingConditions(q, status)
	args = append(args, fargs...)
	return `SELECT ` + deliveryColumns + ` ` + from + ` ` + where + filters + ` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, q.Limit)
}

// listingConditions are the conditions of q after its account (status as given: "" for
// none or one the query states already), and their arguments.
func listingConditions(q outboxdriver.DeliveryQuery, status string) (string, []any) {
	var (
		where string
		args  []any
	)
	for _, f := range []struct{ col, v string }{
		{"endpoint_id", q.EndpointID}, {"event_id", q.EventID}, {"event_type", q.Type}, {"status", status},
	} {
		if f.v != "" {
			where += ` AND ` + f.col + ` = ?`
			args = append(args, f.v)
		}
	}
	if q.BeforeID != "" {
		where += ` AND (created_at, id) < (SELECT created_at, id FROM outbox_deliveries WHERE id = ? AND account = ?)`
		args = append(args, q.BeforeID, q.Account)
	}
	return where, args
}

// listPendingSQL is an endpoint's PENDING listing: its waiting deliveries, newest
// first on their index (outbox_deliveries_endpoint_waiting), and its leased ones (a
// few, at most its in-flight cap: outbox_deliveries_leased); a leased delivery is
// always PENDING.
func listPendingSQL(q outboxdriver.DeliveryQuery) (string, []any) {
	filters, fargs := listingConditions(q, "")
	var args []any
	args = append(append(append(args, q.Account), fargs...), q.Limit)
	args = append(append(args, q.Account), fargs...)
	return `SELECT ` + deliveryColumns + ` FROM (SELECT ` + deliveryColumns + `
		FROM outbox_deliveries INDEXED BY outbox_deliveries_endpoint_waiting
		WHERE account = ? AND status = 'PENDING' AND lease_until IS NULL` + filters + `
		ORDER BY created_at DESC, id DESC LIMIT ?)
		UNION ALL SELECT ` + deliveryColumns + ` FROM outbox_deliveries INDEXED BY outbox_deliveries_leased
		WHERE account = ? AND status = 'PENDING' AND lease_until IS NOT NULL` + filters + `
		ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, q.Limit)
}

// ListDeliveries implements outboxdriver.Store.
func (s *Store) ListDeliveries(ctx context.Context, q outboxdriver.DeliveryQuery) ([]outboxdriver.Delivery, error) {
	if q.EndpointID == "" && q.EventID == "" {
		return s.listAccount(ctx, q)
	}
	query, args := listDeliveriesSQL(q)
	return queryDeliveries(ctx, s.read(), query, args...)
}

// listAccount lists an account's deliveries, newest first, as a merge of its
// endpoints' listings (removed endpoints included): the delivery log has no index by
// account (migration 0007), whose every delivery would cost the single writer an
// index write. Each endpoint's listing is read a few rows at a time, more as the
// merge takes them, so a page costs its rows and a few per endpoint, whatever the
// account holds. All of it reads one snapshot.
func (s *Store) listAccount(ctx context.Context, q outboxdriver.DeliveryQuery) ([]outboxdriver.Delivery, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	rq := s.on(tx)
	endpoints, err := queryIDs(ctx, rq, `SELECT id FROM outbox_endpoints WHERE account = ?`, q.Account)
	if err != nil {
		return nil, err
	}
	logs := make([]*endpointLog, 0, len(endpoints))
	first := max(2, q.Limit/max(1, len(endpoints))+1)
	for _, id := range endpoints {
		l := &endpointLog{q: q, next: first}
		l.q.EndpointID = id
		if err := l.fill(ctx, rq); err != nil {
			return nil, err
		}
		if len(l.rows) > 0 {
			logs = append(logs, l)
		}
	}
	var out []outboxdriver.Delivery
	for len(out) < q.Limit && len(logs) > 0 {
		// The newest head; few endpoints, so a scan of the heads does.
		k := 0
		for i, l := range logs[1:] {
			if newer(l.rows[0], logs[k].rows[0]) {
				k = i + 1
			}
		}
		l := logs[k]
		out = append(out, l.rows[0])
		l.rows = l.rows[1:]
		if len(l.rows) == 0 && !l.done {
			l.q.BeforeID = out[len(out)-1].ID
			l.next = min(2*l.next, q.Limit-len(out))
			if err := l.fill(ctx, rq); err != nil {
				return nil, err
			}
		}
		if len(l.rows) == 0 {
			logs = append(logs[:k], logs[k+1:]...)
		}
	}
	return out, nil
}

// endpointLog is one endpoint's listing under an account's merge: the rows read and
// not yet taken, and how many to read next.
type endpointLog struct {
	q    outboxdriver.DeliveryQuery
	rows []outboxdriver.Delivery
	next int
	// done: the listing has no rows past those read.
	done bool
}

func (l *endpointLog) fill(ctx context.Context, q querier) error {
	if l.next <= 0 {
		l.done = true
		return nil
	}
	l.q.Limit = l.next
	query, args := listDeliveriesSQL(l.q)
	rows, err := queryDeliveries(ctx, q, query, args...)
	l.rows, l.done = rows, len(rows) < l.next
	return err
}

// newer reports whether a sorts before b in a listing: created later, or at the same
// time with a greater id.
func newer(a, b outboxdriver.Delivery) bool {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// UpdateDelivery implements outboxdriver.Store.
func (s *Store) UpdateDelivery(ctx context.Context, p outboxdriver.UpdateDeliveryParams) (outboxdriver.Delivery, error) {
	account, id, change := p.Account, p.ID, p.Decide
	var out outboxdriver.Delivery
	err := s.write(ctx, func(tx querier) error {
		d, err := getDelivery(ctx, tx, id)
		if err != nil {
			return err
		}
		if d.Account != account {
			return notFound("delivery", id)
		}
		ep, err := getEndpoint(ctx, tx, d.EndpointID)
		if err != nil {
			return err
		}
		ch, err := change(d, ep)
		if err != nil {
			return err
		}
		if err := applyChange(ctx, tx, ch, d.ID, ep.ID); err != nil {
			return err
		}
		out, err = getDelivery(ctx, tx, id)
		return err
	})
	return out, err
}

// recoverSQL makes an endpoint's failed deliveries since a time pending again, due at
// once, with a new run of attempts. It walks the endpoint's FAILED index.
const recoverSQL = `UPDATE outbox_deliveries SET status = 'PENDING', run_start = attempts,
next_attempt_at = ?, fault_since = NULL, last_error = '', updated_at = ?
WHERE account = ? AND endpoint_id = ? AND status = 'FAILED' AND created_at >= ?`

// purgeDeliveriesSQL picks a batch of deliveries past retention: each endpoint's
// oldest, on its listing index (there is no index by creation time alone, which
// every delivery would pay for): its cost is the batch and a lookup per endpoint,
// not the table.
const purgeDeliveriesSQL = `SELECT d.id FROM outbox_endpoints e
CROSS JOIN outbox_deliveries d INDEXED BY outbox_deliveries_endpoint_listing
WHERE d.endpoint_id = e.id AND d.created_at < ? AND d.lease_until IS NULL LIMIT ?`

// Recover implements outboxdriver.Store.
func (s *Store) Recover(ctx context.Context, p outboxdriver.RecoverParams) (int, error) {
	account, endpointID, since, now := p.Account, p.EndpointID, p.Since, p.Now
	var n int64
	err := s.write(ctx, func(tx querier) error {
		// In the transaction: an endpoint removed meanwhile gets nothing back.
		if _, err := accountEndpoint(ctx, tx, account, endpointID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, recoverSQL, micros(now), micros(now), account, endpointID, sinceMicros(since))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || p.Audit == nil {
			return err
		}
		entry := *p.Audit
		entry.Count = int(n)
		return insertAudit(ctx, tx, []outboxdriver.AuditEntry{entry})
	})
	return int(n), err
}

// Purge implements outboxdriver.Store.
func (s *Store) Purge(ctx context.Context, p outboxdriver.PurgeParams) (deliveries, events int, err error) {
	before, limit := p.Before, p.Limit
	err = s.write(ctx, func(tx querier) error {
		ids, err := queryIDs(ctx, tx, purgeDeliveriesSQL, micros(before), limit)
		if err != nil {
			return err
		}
		list, _ := json.Marshal(ids)
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox_attempts WHERE delivery_id IN (SELECT value FROM json_each(?))`, string(list)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM outbox_deliveries WHERE id IN (SELECT value FROM json_each(?))`, string(list)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM outbox_events WHERE rowid IN (
			SELECT v.rowid FROM outbox_events v WHERE v.stored_at < ?
			AND NOT EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.account = v.account AND d.event_id = v.id)
			ORDER BY v.stored_at LIMIT ?)`, micros(before), limit)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		deliveries, events = len(ids), int(n)
		if p.KeysBefore.IsZero() {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM outbox_idempotency_keys WHERE (account, key) IN (
			SELECT account, key FROM outbox_idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
			micros(p.KeysBefore), limit)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return deliveries, events, nil
}
