package sqlitestore

import (
	"context"
	"encoding/json"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func getDelivery(ctx context.Context, q querier, id string) (outboxdriver.Delivery, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM outbox_deliveries WHERE id = ?`, id), scanDelivery, "delivery", id)
}

// queryDeliveries selects deliveries; tail is the query after its columns, "FROM ...".
func queryDeliveries(ctx context.Context, q querier, tail string, args ...any) ([]outboxdriver.Delivery, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+deliveryColumns+` `+tail, args...)
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
	rows, err := s.read().QueryContext(ctx, `SELECT `+attemptColumns+` FROM outbox_attempts
		WHERE delivery_id = ? ORDER BY number`, id)
	attempts, err := sqlrows.Collect(nil, rows, err, scanAttempt)
	if err != nil {
		return outboxdriver.Delivery{}, nil, err
	}
	return d, attempts, nil
}

// listingIndexes name the index an endpoint's listing walks for each status filter
// (migration 0005): the partial index of a state, repeated as a literal in the query
// so that SQLite may use it.
var listingIndexes = map[outboxdriver.DeliveryStatus]string{
	outboxdriver.DeliveryPending: "outbox_deliveries_endpoint_pending",
	outboxdriver.DeliveryFailed:  "outbox_deliveries_endpoint_failed",
	outboxdriver.DeliveryDead:    "outbox_deliveries_endpoint_dead",
	outboxdriver.DeliveryDropped: "outbox_deliveries_endpoint_dropped",
}

// listDeliveriesSQL builds the query of ListDeliveries and its arguments. An
// endpoint's listing names its index: without statistics SQLite may walk the
// account's index instead, reading every delivery of the account's other endpoints.
// An event id filter walks the event's few deliveries; a status filter the partial
// index of that state; any other the endpoint's index, in the listing's order.
func listDeliveriesSQL(q outboxdriver.DeliveryQuery) (string, []any) {
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
	where += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, q.Limit)
	return from + ` ` + where, args
}

// ListDeliveries implements outboxdriver.Store.
func (s *Store) ListDeliveries(ctx context.Context, q outboxdriver.DeliveryQuery) ([]outboxdriver.Delivery, error) {
	query, args := listDeliveriesSQL(q)
	return queryDeliveries(ctx, s.read(), query, args...)
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

// purgeDeliveriesSQL picks a batch of deliveries past retention, oldest first, on
// the created_at index: its cost is the batch, not the table.
const purgeDeliveriesSQL = `SELECT id FROM outbox_deliveries
WHERE created_at < ? AND lease_until IS NULL ORDER BY created_at LIMIT ?`

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
