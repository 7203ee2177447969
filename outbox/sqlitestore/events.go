package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// Publish implements outbox.Store. With a caller's tx it runs on that transaction
// (which holds SQLite's write lock from BEGIN IMMEDIATE) and the caller commits.
func (s *Store) Publish(ctx context.Context, tx *sql.Tx, ev outbox.Event, now time.Time, plan outbox.PlanFunc) (outbox.Published, error) {
	if tx != nil {
		return publish(ctx, s.on(tx), ev, now, plan)
	}
	// The group may write this publish with the others of its transaction; fn is the
	// way on its own.
	pr := &pubReq{ev: ev, now: now, plan: plan}
	err := s.submit(ctx, &writeReq{pub: pr, fn: func(q querier) error {
		var err error
		pr.out, err = publish(ctx, q, ev, now, plan)
		return err
	}})
	if err != nil {
		return outbox.Published{}, err
	}
	return pr.out, nil
}

func publish(ctx context.Context, tx querier, ev outbox.Event, now time.Time, plan outbox.PlanFunc) (outbox.Published, error) {
	// Insert first: the common case (a new id) costs one statement.
	res, err := tx.ExecContext(ctx, `INSERT INTO outbox_events (id, account, type, created_at, stored_at, data)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		ev.ID, ev.Account, ev.Type, micros(ev.CreatedAt), micros(now), []byte(ev.Data))
	if err != nil {
		return outbox.Published{}, fmt.Errorf("sqlitestore: insert event: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return outbox.Published{}, err
	} else if n == 0 {
		var sc eventScan
		if err := tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM outbox_events WHERE id = ?`, ev.ID).Scan(sc.dest()...); err != nil {
			return outbox.Published{}, err
		}
		old := sc.event()
		if old.Account != ev.Account || old.Type != ev.Type || !sameJSON(old.Data, ev.Data) {
			return outbox.Published{}, fmt.Errorf("%w: event %s exists with other content", outbox.ErrConflict, ev.ID)
		}
		ds, err := queryDeliveries(ctx, tx, `WHERE event_id = ? ORDER BY created_at, id`, ev.ID)
		return outbox.Published{Event: old, Deliveries: ds, Duplicate: true}, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = ? AND removed_at IS NULL ORDER BY created_at, id`, ev.Account)
	if err != nil {
		return outbox.Published{}, err
	}
	endpoints, err := scanEndpoints(rows)
	if err != nil {
		return outbox.Published{}, err
	}
	pub := outbox.Published{Event: ev}
	leases := newPublishLeases(tx, now)
	for _, ep := range endpoints {
		d, a, ok := plan(ep)
		if !ok {
			continue
		}
		if err := leases.grant(ctx, ep, &d); err != nil {
			return outbox.Published{}, err
		}
		if err := insertDelivery(ctx, tx, d); err != nil {
			return outbox.Published{}, err
		}
		if a != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (`+attemptColumns+`) VALUES (?,?,?,?,?,?,?,?,?)`,
				attemptArgs(*a)...); err != nil {
				return outbox.Published{}, fmt.Errorf("sqlitestore: insert attempt: %w", err)
			}
		}
		pub.Deliveries = append(pub.Deliveries, d)
	}
	return pub, nil
}

// insertDeliveryColumns are the columns a new delivery sets, in deliveryArgs' order.
const insertDeliveryColumns = `id, account, event_id, event_type, endpoint_id,
	status, attempts, run_start, next_attempt_at, fault_since, last_error, created_at, updated_at,
	lease_until, lease_token`

// insertDeliveryArgs is len(deliveryArgs(d)).
const insertDeliveryArgs = 15

func deliveryArgs(d outbox.Delivery) []any {
	var token any
	if d.LeaseUntil != nil {
		token = outbox.PublishLeaseToken(d.ID)
	}
	return []any{d.ID, d.Account, d.EventID, d.EventType, d.EndpointID, string(d.Status), d.Attempts, d.RunStart,
		micros(d.NextAttemptAt), microsPtr(d.FaultSince), d.LastError, micros(d.CreatedAt), micros(d.UpdatedAt),
		microsPtr(d.LeaseUntil), token}
}

func insertDelivery(ctx context.Context, tx querier, d outbox.Delivery) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox_deliveries (`+insertDeliveryColumns+`)
		VALUES `+rowsSQL(1, insertDeliveryArgs), deliveryArgs(d)...)
	if err != nil {
		return fmt.Errorf("sqlitestore: insert delivery: %w", err)
	}
	return nil
}

// publishLeases grants the leases new deliveries ask for (outbox.PlanFunc) within one
// transaction, counting each endpoint's leases once and then those it grants.
type publishLeases struct {
	tx     querier
	now    time.Time
	leased map[string]int // endpoint id → leases it has
}

func newPublishLeases(tx querier, now time.Time) *publishLeases {
	return &publishLeases{tx: tx, now: now, leased: map[string]int{}}
}

// grant keeps d's lease when ep can take one more, and clears it otherwise.
func (l *publishLeases) grant(ctx context.Context, ep outbox.Endpoint, d *outbox.Delivery) error {
	if d.LeaseUntil == nil {
		return nil
	}
	held := ep.HoldUntil != nil && ep.HoldUntil.After(l.now)
	if d.Status != outbox.DeliveryPending || ep.Status != outbox.EndpointActive || ep.RemovedAt != nil || held {
		d.LeaseUntil = nil
		return nil
	}
	n, ok := l.leased[ep.ID]
	if !ok {
		if err := l.tx.QueryRowContext(ctx, `SELECT count(*) FROM outbox_deliveries
			WHERE endpoint_id = ? AND lease_until IS NOT NULL`, ep.ID).Scan(&n); err != nil {
			return fmt.Errorf("sqlitestore: count leases: %w", err)
		}
	}
	if n >= ep.InFlightCap {
		d.LeaseUntil = nil
	} else {
		n++
	}
	l.leased[ep.ID] = n
	return nil
}

// GetEvent implements outbox.Store.
func (s *Store) GetEvent(ctx context.Context, account, id string) (outbox.Event, error) {
	var sc eventScan
	err := s.read().QueryRowContext(ctx, `SELECT `+eventColumns+` FROM outbox_events WHERE id = ? AND account = ?`,
		id, account).Scan(sc.dest()...)
	if isNoRows(err) {
		return outbox.Event{}, notFound("event", id)
	}
	if err != nil {
		return outbox.Event{}, err
	}
	return sc.event(), nil
}

// ListEvents implements outbox.Store.
func (s *Store) ListEvents(ctx context.Context, q outbox.EventQuery) ([]outbox.Event, error) {
	query := `SELECT ` + eventColumns + ` FROM outbox_events WHERE account = ? AND created_at >= ?`
	args := []any{q.Account, sinceMicros(q.Since)}
	if q.Type != "" {
		query += ` AND type = ?`
		args = append(args, q.Type)
	}
	if q.AfterID != "" {
		query += ` AND (created_at, id) > (SELECT created_at, id FROM outbox_events WHERE id = ? AND account = ?)`
		args = append(args, q.AfterID, q.Account)
	}
	query += ` ORDER BY created_at, id LIMIT ?`
	args = append(args, q.Limit)
	rows, err := s.read().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []outbox.Event
	for rows.Next() {
		var sc eventScan
		if err := rows.Scan(sc.dest()...); err != nil {
			return nil, err
		}
		out = append(out, sc.event())
	}
	return out, rows.Err()
}

func sinceMicros(t time.Time) int64 {
	if t.IsZero() {
		return -1 << 62
	}
	return micros(t)
}

// sameJSON compares event data as the outbox stores it, compacted: data stored
// before the outbox compacted it still matches a republish of the same bytes.
func sameJSON(stored, published []byte) bool {
	if bytes.Equal(stored, published) {
		return true
	}
	var compact bytes.Buffer
	return json.Compact(&compact, stored) == nil && bytes.Equal(compact.Bytes(), published)
}
