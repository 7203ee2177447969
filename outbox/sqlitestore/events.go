package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Publish implements outboxdriver.Store. A caller's p.Tx must be a *sql.Tx begun on DB:
// the publish runs on it (it holds SQLite's write lock from BEGIN IMMEDIATE) and the
// caller commits.
func (s *Store) Publish(ctx context.Context, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	if p.Tx != nil {
		tx, err := callerTx(p.Tx)
		if err != nil {
			return outboxdriver.Published{}, err
		}
		return publish(ctx, s.on(tx), p)
	}
	// The group may write this publish with the others of its transaction; fn is the
	// way on its own. A publish with an idempotency key always goes its own way.
	pr := &pubReq{p: p}
	req := &writeReq{fn: func(q querier) error {
		var err error
		pr.out, err = publish(ctx, q, p)
		return err
	}}
	if p.IdempotencyKey == "" {
		req.pub = pr
	}
	if err := s.submit(ctx, req); err != nil {
		return outboxdriver.Published{}, err
	}
	return pr.out, nil
}

// callerTx is the caller's transaction of a Publish: the SQLite store writes in a
// *sql.Tx (begun on DB), and refuses anything else with ErrInvalid.
func callerTx(tx any) (*sql.Tx, error) {
	switch t := tx.(type) {
	case *sql.Tx:
		if t != nil {
			return t, nil
		}
		return nil, &outboxdriver.ValidationError{Field: "tx", Reason: "nil *sql.Tx"}
	default:
		return nil, &outboxdriver.ValidationError{Field: "tx",
			Reason: fmt.Sprintf("the SQLite store writes in a *sql.Tx begun on its DB, not a %T", tx)}
	}
}

func publish(ctx context.Context, tx querier, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	ev, now := p.Event, p.Now
	if p.IdempotencyKey != "" {
		if pub, done, err := claimKey(ctx, tx, p); done || err != nil {
			return pub, err
		}
	}
	channels, _, err := outboxdriver.EncodeEventRouting(ev)
	if err != nil {
		return outboxdriver.Published{}, err
	}
	// Insert first: the common case (a new id) costs one statement.
	res, err := tx.ExecContext(ctx, `INSERT INTO outbox_events (id, account, type, created_at, stored_at, data, channels)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account, id) DO NOTHING`,
		ev.ID, ev.Account, ev.Type, micros(ev.CreatedAt), micros(now), []byte(ev.Data), channels)
	if err != nil {
		return outboxdriver.Published{}, fmt.Errorf("sqlitestore: insert event: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return outboxdriver.Published{}, err
	} else if n == 0 {
		old, err := one(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM outbox_events WHERE account = ? AND id = ?`,
			ev.Account, ev.ID), scanEvent, "event", ev.ID)
		if err != nil {
			return outboxdriver.Published{}, err
		}
		if old.Type != ev.Type || !sameJSON(old.Data, ev.Data) {
			return outboxdriver.Published{}, fmt.Errorf("%w: event %s exists with other content", outboxdriver.ErrConflict, ev.ID)
		}
		return eventPublished(ctx, tx, old)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = ? AND removed_at IS NULL ORDER BY created_at, id`, ev.Account)
	endpoints, err := sqlrows.Collect(nil, rows, err, scanEndpoint)
	if err != nil {
		return outboxdriver.Published{}, err
	}
	pub := outboxdriver.Published{Event: ev}
	leases := newPublishLeases(tx, now)
	for _, ep := range endpoints {
		d, a, ok := p.Plan(ep)
		if !ok {
			if why := p.Excluded(ep); why != "" {
				pub.Event.Excluded = append(pub.Event.Excluded, outboxdriver.Exclusion{EndpointID: ep.ID, Reason: why})
			}
			continue
		}
		if err := leases.grant(ctx, ep, &d); err != nil {
			return outboxdriver.Published{}, err
		}
		if err := insertDelivery(ctx, tx, d, a); err != nil {
			return outboxdriver.Published{}, err
		}
		pub.Deliveries = append(pub.Deliveries, d)
	}
	if err := recordExcluded(ctx, tx, pub.Event); err != nil {
		return outboxdriver.Published{}, err
	}
	return pub, nil
}

// insertDeliverySQL inserts rows new deliveries: their columns, and their attempts
// (attempt 0, which a plan may make, is a delivery's latest: in its row) when
// withAttempts, the values in deliveryArgs' order. Without attempts a row binds eight
// values fewer.
func insertDeliverySQL(rows int, withAttempts bool) string {
	columns, n := insertDeliveryColumns, insertDeliveryArgs
	if withAttempts {
		columns, n = columns+`, `+latestAttemptColumns, n+latestAttemptArgCount
	}
	return `INSERT INTO outbox_deliveries (` + columns + `) VALUES ` + rowsSQL(rows, n)
}

// eventPublished is the answer of a publish that found ev stored: ev and its
// deliveries, Duplicate set.
func eventPublished(ctx context.Context, tx querier, ev outboxdriver.Event) (outboxdriver.Published, error) {
	ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM outbox_deliveries WHERE account = ? AND event_id = ? ORDER BY created_at, id`, ev.Account, ev.ID)
	return outboxdriver.Published{Event: ev, Deliveries: ds, Duplicate: true}, err
}

// recordExcluded writes the exclusions of a new event, when it has any: they are
// known once its endpoints were planned, after the event's row was inserted.
func recordExcluded(ctx context.Context, tx querier, ev outboxdriver.Event) error {
	if len(ev.Excluded) == 0 {
		return nil
	}
	_, excluded, err := outboxdriver.EncodeEventRouting(ev)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE outbox_events SET excluded = ? WHERE account = ? AND id = ?`,
		excluded, ev.Account, ev.ID); err != nil {
		return fmt.Errorf("sqlitestore: record exclusions: %w", err)
	}
	return nil
}

// claimKey takes p's idempotency key for the event p publishes (outboxdriver.PublishParams):
// new, or replacing one stored before p.KeySince. When the account holds it already,
// done is true and the answer is the event it published (or ErrConflict for another
// fingerprint). The publish's transaction holds the write lock: no other can take
// the key meanwhile.
func claimKey(ctx context.Context, tx querier, p outboxdriver.PublishParams) (outboxdriver.Published, bool, error) {
	ev := p.Event
	var fingerprint, eventID string
	err := tx.QueryRowContext(ctx, `SELECT fingerprint, event_id FROM outbox_idempotency_keys
		WHERE account = ? AND key = ? AND created_at >= ?`, ev.Account, p.IdempotencyKey, micros(p.KeySince)).Scan(&fingerprint, &eventID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return outboxdriver.Published{}, false, fmt.Errorf("sqlitestore: idempotency key: %w", err)
	case fingerprint != p.Fingerprint:
		return outboxdriver.Published{}, true, fmt.Errorf("%w: Idempotency-Key %q was used with another request", outboxdriver.ErrConflict, p.IdempotencyKey)
	default:
		old, err := one(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM outbox_events WHERE account = ? AND id = ?`,
			ev.Account, eventID), scanEvent, "event", eventID)
		if err == nil {
			pub, err := eventPublished(ctx, tx, old)
			return pub, true, err
		}
		if !errors.Is(err, outboxdriver.ErrNotFound) {
			return outboxdriver.Published{}, false, err
		}
		// Its event was purged: the key is taken anew.
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_idempotency_keys (account, key, fingerprint, event_id, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, key) DO UPDATE SET fingerprint = excluded.fingerprint,
		event_id = excluded.event_id, created_at = excluded.created_at`,
		ev.Account, p.IdempotencyKey, p.Fingerprint, ev.ID, micros(p.Now)); err != nil {
		return outboxdriver.Published{}, false, fmt.Errorf("sqlitestore: idempotency key: %w", err)
	}
	return outboxdriver.Published{}, false, nil
}

// insertDeliveryColumns are the columns every new delivery sets.
const insertDeliveryColumns = `id, account, event_id, event_type, endpoint_id,
	status, attempts, run_start, next_attempt_at, fault_since, last_error, created_at, updated_at,
	lease_until, lease_token`

// insertDeliveryArgs is len(deliveryArgs(d, nil, false)).
const insertDeliveryArgs = 15

// deliveryArgs are the values of a row of insertDeliverySQL: d's, and when
// withAttempts its attempt a's (nil: none).
func deliveryArgs(d outboxdriver.Delivery, a *outboxdriver.Attempt, withAttempts bool) []any {
	var token any
	if d.LeaseUntil != nil {
		token = outboxdriver.PublishLeaseToken(d.ID)
	}
	args := []any{d.ID, d.Account, d.EventID, d.EventType, d.EndpointID, string(d.Status), d.Attempts, d.RunStart,
		micros(d.NextAttemptAt), microsPtr(d.FaultSince), d.LastError, micros(d.CreatedAt), micros(d.UpdatedAt),
		microsPtr(d.LeaseUntil), token}
	if withAttempts {
		args = append(args, latestAttemptArgs(a)...)
	}
	return args
}

func insertDelivery(ctx context.Context, tx querier, d outboxdriver.Delivery, a *outboxdriver.Attempt) error {
	_, err := tx.ExecContext(ctx, insertDeliverySQL(1, a != nil), deliveryArgs(d, a, a != nil)...)
	if err != nil {
		return fmt.Errorf("sqlitestore: insert delivery: %w", err)
	}
	return nil
}

// publishLeases grants the leases new deliveries ask for (outboxdriver.PlanFunc) within one
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
func (l *publishLeases) grant(ctx context.Context, ep outboxdriver.Endpoint, d *outboxdriver.Delivery) error {
	if d.LeaseUntil == nil {
		return nil
	}
	held := ep.HoldUntil != nil && ep.HoldUntil.After(l.now)
	if d.Status != outboxdriver.DeliveryPending || ep.Status != outboxdriver.EndpointActive || ep.RemovedAt != nil || held ||
		ep.RateLimit > 0 {
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

// GetEvent implements outboxdriver.Store.
func (s *Store) GetEvent(ctx context.Context, p outboxdriver.GetEventParams) (outboxdriver.Event, error) {
	return one(s.read().QueryRowContext(ctx, `SELECT `+eventColumns+` FROM outbox_events WHERE id = ? AND account = ?`,
		p.ID, p.Account), scanEvent, "event", p.ID)
}

// ListEvents implements outboxdriver.Store.
func (s *Store) ListEvents(ctx context.Context, q outboxdriver.EventQuery) ([]outboxdriver.Event, error) {
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
	return sqlrows.Collect(nil, rows, err, scanEvent)
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
