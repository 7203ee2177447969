package pgstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Publish implements outboxdriver.Store. A caller's p.Tx is a pgx.Tx or a *sql.Tx (of
// pgx's database/sql driver, "pgx") on this store's database, whatever its
// search_path: the publish runs on it and the caller commits. The event and its
// deliveries exist, and the wake-up of the dispatchers is sent, only if it does.
func (s *Store) Publish(ctx context.Context, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	if p.Tx != nil {
		q, err := callerTx(p.Tx)
		if err != nil {
			return outboxdriver.Published{}, err
		}
		return s.publish(ctx, q, p)
	}
	out, err := s.publishInGroup(ctx, p)
	if err != nil {
		return outboxdriver.Published{}, err
	}
	return out, nil
}

// callerTx is the caller's transaction of a Publish, refused with ErrInvalid when it
// is of another type or a nil one.
func callerTx(tx any) (querier, error) {
	if v := reflect.ValueOf(tx); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, &outboxdriver.ValidationError{Field: "tx", Reason: fmt.Sprintf("nil %T", tx)}
	}
	switch t := tx.(type) {
	case pgx.Tx:
		return pgxQuerier{t}, nil
	case *sql.Tx:
		return sqlQuerier{t}, nil
	default:
		return nil, &outboxdriver.ValidationError{Field: "tx",
			Reason: fmt.Sprintf("the PostgreSQL store writes in a pgx.Tx or a *sql.Tx, not a %T", tx)}
	}
}

func (s *Store) publish(ctx context.Context, q querier, p outboxdriver.PublishParams) (outboxdriver.Published, error) {
	ev := p.Event
	if p.IdempotencyKey != "" {
		if pub, done, err := s.claimKey(ctx, q, p); done || err != nil {
			return pub, err
		}
	}
	channels, _, err := outboxdriver.EncodeEventRouting(ev)
	if err != nil {
		return outboxdriver.Published{}, err
	}
	// Insert first: the common case (a new id) costs one statement.
	n, err := q.exec(ctx, s.q(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data, channels)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account, id) DO NOTHING`),
		ev.ID, ev.Account, ev.Type, ev.CreatedAt, p.Now, []byte(ev.Data), channels)
	if err != nil {
		return outboxdriver.Published{}, fmt.Errorf("pgstore: insert event: %w", err)
	}
	if n == 0 {
		return s.duplicate(ctx, q, ev)
	}
	eps, err := scanEndpoints(q.query(ctx, s.q(`SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = $1 AND removed_at IS NULL ORDER BY created_at, id FOR KEY SHARE`), ev.Account))
	if err != nil {
		return outboxdriver.Published{}, err
	}
	pub := outboxdriver.Published{Event: ev}
	var attempts []outboxdriver.Attempt
	claimable := false
	for _, ep := range eps {
		d, a, ok := p.Plan(ep)
		if !ok {
			if why := p.Excluded(ep); why != "" {
				pub.Event.Excluded = append(pub.Event.Excluded, outboxdriver.Exclusion{EndpointID: ep.ID, Reason: why})
			}
			continue
		}
		if d.LeaseUntil != nil {
			if d.LeaseUntil, err = s.grantLease(ctx, q, ep, d, p.Now); err != nil {
				return outboxdriver.Published{}, err
			}
		}
		if d.Status == outboxdriver.DeliveryPending && d.LeaseUntil == nil {
			claimable = true
		}
		pub.Deliveries = append(pub.Deliveries, d)
		if a != nil {
			attempts = append(attempts, *a)
		}
	}
	if err := s.insertDeliveries(ctx, q, pub.Deliveries); err != nil {
		return outboxdriver.Published{}, err
	}
	if err := s.insertAttempts(ctx, q, attempts); err != nil {
		return outboxdriver.Published{}, err
	}
	if err := s.recordExcluded(ctx, q, pub.Event); err != nil {
		return outboxdriver.Published{}, err
	}
	// Deliveries another node may claim: wake the dispatchers when the transaction
	// commits (a rolled-back one sends nothing).
	if claimable && s.notify.due() {
		if err := s.sendWakeup(ctx, q); err != nil {
			return outboxdriver.Published{}, err
		}
	}
	return pub, nil
}

// recordExcluded writes the exclusions of a new event, when it has any: they are
// known once its endpoints were planned, after the event's row was inserted.
func (s *Store) recordExcluded(ctx context.Context, q querier, ev outboxdriver.Event) error {
	if len(ev.Excluded) == 0 {
		return nil
	}
	_, excluded, err := outboxdriver.EncodeEventRouting(ev)
	if err != nil {
		return err
	}
	if _, err := q.exec(ctx, s.q(`UPDATE outbox_events SET excluded = $1 WHERE account = $2 AND id = $3`),
		excluded, ev.Account, ev.ID); err != nil {
		return fmt.Errorf("pgstore: record exclusions: %w", err)
	}
	return nil
}

// claimKey takes p's idempotency key for the event p publishes (outboxdriver.PublishParams):
// new, or replacing one stored before p.KeySince. When the account holds it already,
// done is true and the answer is the event it published (or ErrConflict for another
// fingerprint). A publish of the same key under way in another transaction holds
// the key's row until it ends: the insert waits for it, and then reads what it
// committed.
func (s *Store) claimKey(ctx context.Context, q querier, p outboxdriver.PublishParams) (outboxdriver.Published, bool, error) {
	ev := p.Event
	var took int
	err := q.queryRow(ctx, s.q(`INSERT INTO outbox_idempotency_keys (account, key, fingerprint, event_id, created_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (account, key) DO UPDATE SET fingerprint = excluded.fingerprint, event_id = excluded.event_id,
			created_at = excluded.created_at
		WHERE outbox_idempotency_keys.created_at < $6
		RETURNING 1`), ev.Account, p.IdempotencyKey, p.Fingerprint, ev.ID, p.Now, p.KeySince).Scan(&took)
	if err == nil {
		return outboxdriver.Published{}, false, nil
	}
	if !isNoRows(err) {
		return outboxdriver.Published{}, false, fmt.Errorf("pgstore: idempotency key: %w", err)
	}
	var fingerprint, eventID string
	if err := q.queryRow(ctx, s.q(`SELECT fingerprint, event_id FROM outbox_idempotency_keys WHERE account = $1 AND key = $2`),
		ev.Account, p.IdempotencyKey).Scan(&fingerprint, &eventID); err != nil {
		return outboxdriver.Published{}, false, fmt.Errorf("pgstore: idempotency key: %w", err)
	}
	if fingerprint != p.Fingerprint {
		return outboxdriver.Published{}, true, fmt.Errorf("%w: Idempotency-Key %q was used with another request", outboxdriver.ErrConflict, p.IdempotencyKey)
	}
	old, err := one(q.queryRow(ctx, s.q(`SELECT `+eventColumns+` FROM outbox_events WHERE account = $1 AND id = $2`),
		ev.Account, eventID), scanEvent, "event", eventID)
	if err == nil {
		pub, err := s.eventPublished(ctx, q, old)
		return pub, true, err
	}
	if !errors.Is(err, outboxdriver.ErrNotFound) {
		return outboxdriver.Published{}, false, err
	}
	// Its event was purged: the key is taken anew.
	if _, err := q.exec(ctx, s.q(`UPDATE outbox_idempotency_keys SET event_id = $3, created_at = $4
		WHERE account = $1 AND key = $2`), ev.Account, p.IdempotencyKey, ev.ID, p.Now); err != nil {
		return outboxdriver.Published{}, false, fmt.Errorf("pgstore: idempotency key: %w", err)
	}
	return outboxdriver.Published{}, false, nil
}

// duplicate answers a publish of an id that exists: the stored event and its
// deliveries when it is the same event, ErrConflict otherwise.
func (s *Store) duplicate(ctx context.Context, q querier, ev outboxdriver.Event) (outboxdriver.Published, error) {
	old, err := one(q.queryRow(ctx, s.q(`SELECT `+eventColumns+` FROM outbox_events WHERE account = $1 AND id = $2`), ev.Account, ev.ID),
		scanEvent, "event", ev.ID)
	if err != nil {
		return outboxdriver.Published{}, err
	}
	if old.Type != ev.Type || !sameJSON(old.Data, ev.Data) {
		return outboxdriver.Published{}, fmt.Errorf("%w: event %s exists with other content", outboxdriver.ErrConflict, ev.ID)
	}
	return s.eventPublished(ctx, q, old)
}

// eventPublished is the answer of a publish that found ev stored: ev and its
// deliveries, Duplicate set.
func (s *Store) eventPublished(ctx context.Context, q querier, ev outboxdriver.Event) (outboxdriver.Published, error) {
	ds, err := scanDeliveries(q.query(ctx, s.q(`SELECT `+deliveryColumns+` FROM outbox_deliveries
		WHERE account = $1 AND event_id = $2 ORDER BY created_at, id`), ev.Account, ev.ID))
	return outboxdriver.Published{Event: ev, Deliveries: ds, Duplicate: true}, err
}

// grantLeaseSQL leases one more delivery of endpoint $1 as it is published: when the
// endpoint takes deliveries at the time of storing and has room under its cap, and its
// row is not locked by a claim or a completion, which this publish does not wait for
// (the delivery is then stored unleased, and claimed). It returns the lease's end.
const grantLeaseSQL = `UPDATE outbox_endpoints SET in_flight = in_flight + 1
WHERE id = (SELECT id FROM outbox_endpoints WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED)
  AND status = 'ACTIVE' AND removed_at IS NULL
  AND (hold_until IS NULL OR hold_until <= coalesce($2::timestamptz, now()))
  AND in_flight < in_flight_cap
RETURNING coalesce($2::timestamptz, now()) + $3::interval`

// grantLease returns the lease d gets (outboxdriver.PlanFunc), or nil.
func (s *Store) grantLease(ctx context.Context, q querier, ep outboxdriver.Endpoint, d outboxdriver.Delivery, now time.Time) (*time.Time, error) {
	if d.Status != outboxdriver.DeliveryPending || ep.RateLimit > 0 {
		return nil, nil
	}
	var until time.Time
	err := q.queryRow(ctx, s.q(grantLeaseSQL), ep.ID, s.now(now), d.LeaseUntil.Sub(now)).Scan(&until)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: publish lease: %w", err)
	}
	u := utc(until)
	return &u, nil
}

// insertDeliveries inserts new deliveries in one statement, a leased one with its
// publish token.
func (s *Store) insertDeliveries(ctx context.Context, q querier, ds []outboxdriver.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	n := len(ds)
	ids, accounts, events, types, endpoints, statuses, errs := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	tokens := make([]*string, n)
	attempts, runs := make([]int32, n), make([]int32, n)
	next, created, updated := make([]time.Time, n), make([]time.Time, n), make([]time.Time, n)
	fault, lease := timeCols(n), timeCols(n)
	for i, d := range ds {
		ids[i], accounts[i], events[i], types[i], endpoints[i], statuses[i], errs[i] = d.ID, d.Account, d.EventID, d.EventType,
			d.EndpointID, string(d.Status), d.LastError
		attempts[i], runs[i] = int32(d.Attempts), int32(d.RunStart)
		next[i], created[i], updated[i], fault[i], lease[i] = d.NextAttemptAt, d.CreatedAt, d.UpdatedAt, d.FaultSince, d.LeaseUntil
		if d.LeaseUntil != nil {
			tok := outboxdriver.PublishLeaseToken(d.ID)
			tokens[i] = &tok
		}
	}
	_, err := q.exec(ctx, s.q(`INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status,
		attempts, run_start, next_attempt_at, fault_since, last_error, created_at, updated_at, lease_until, lease_token)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
			$9::timestamptz[], $10::timestamptz[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::timestamptz[], $15::text[])`),
		ids, accounts, events, types, endpoints, statuses, attempts, runs, next, fault, errs, created, updated, lease, tokens)
	if err != nil {
		return fmt.Errorf("pgstore: insert deliveries: %w", err)
	}
	return nil
}

// insertAttempts inserts attempt records in one statement.
func (s *Store) insertAttempts(ctx context.Context, q querier, as []outboxdriver.Attempt) error {
	if len(as) == 0 {
		return nil
	}
	n := len(as)
	ids, classes, errs, responses := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	numbers, statuses := make([]int32, n), make([]int32, n)
	at, scheduled := make([]time.Time, n), make([]time.Time, n)
	durations := make([]int64, n)
	for i, a := range as {
		ids[i], classes[i], errs[i], responses[i] = a.DeliveryID, string(a.Class), a.Error, a.Response
		numbers[i], statuses[i], at[i], scheduled[i], durations[i] = int32(a.Number), int32(a.Status), a.At, a.ScheduledAt, a.Duration.Microseconds()
	}
	_, err := q.exec(ctx, s.q(`INSERT INTO outbox_attempts (`+attemptColumns+`)
		SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::timestamptz[], $5::bigint[], $6::int[],
			$7::text[], $8::text[], $9::text[])`),
		ids, numbers, at, scheduled, durations, statuses, classes, errs, responses)
	if err != nil {
		return fmt.Errorf("pgstore: insert attempts: %w", err)
	}
	return nil
}

// GetEvent implements outboxdriver.Store.
func (s *Store) GetEvent(ctx context.Context, p outboxdriver.GetEventParams) (outboxdriver.Event, error) {
	return one(s.read().queryRow(ctx, s.q(`SELECT `+eventColumns+` FROM outbox_events WHERE id = $1 AND account = $2`),
		p.ID, p.Account), scanEvent, "event", p.ID)
}

// ListEvents implements outboxdriver.Store.
func (s *Store) ListEvents(ctx context.Context, q outboxdriver.EventQuery) ([]outboxdriver.Event, error) {
	query := `SELECT ` + eventColumns + ` FROM outbox_events WHERE account = $1`
	args := []any{q.Account}
	if !q.Since.IsZero() {
		args = append(args, q.Since)
		query += fmt.Sprintf(` AND created_at >= $%d`, len(args))
	}
	if q.Type != "" {
		args = append(args, q.Type)
		query += fmt.Sprintf(` AND type = $%d`, len(args))
	}
	if q.AfterID != "" {
		args = append(args, q.AfterID)
		query += fmt.Sprintf(` AND (created_at, id) > (SELECT created_at, id FROM outbox_events WHERE id = $%d AND account = $1)`, len(args))
	}
	args = append(args, q.Limit)
	query += fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d`, len(args))
	rs, err := s.read().query(ctx, s.q(query), args...)
	return sqlrows.Collect(nil, rs, err, scanEvent)
}

// sameJSON compares event data as the outbox stores it, compacted.
func sameJSON(stored, published []byte) bool {
	if bytes.Equal(stored, published) {
		return true
	}
	var compact bytes.Buffer
	return json.Compact(&compact, stored) == nil && bytes.Equal(compact.Bytes(), published)
}
