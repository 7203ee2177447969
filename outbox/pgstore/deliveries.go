package pgstore

import (
	"context"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/deliverybatch"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

func (s *Store) getDelivery(ctx context.Context, q querier, id string) (outboxdriver.Delivery, error) {
	return one(q.queryRow(ctx, s.q(`SELECT `+deliveryColumns+` FROM outbox_deliveries WHERE id = $1`), id), scanDelivery, "delivery", id)
}

// GetDelivery implements outboxdriver.Store.
func (s *Store) GetDelivery(ctx context.Context, p outboxdriver.GetDeliveryParams) (outboxdriver.Delivery, []outboxdriver.Attempt, error) {
	d, err := s.getDelivery(ctx, s.read(), p.ID)
	if err != nil {
		return outboxdriver.Delivery{}, nil, err
	}
	if d.Account != p.Account {
		return outboxdriver.Delivery{}, nil, notFound("delivery", p.ID)
	}
	rs, err := s.read().query(ctx, s.q(`SELECT `+attemptColumns+` FROM outbox_attempts
		WHERE delivery_id = $1 ORDER BY number`), p.ID)
	attempts, err := sqlrows.Collect(nil, rs, err, scanAttempt)
	if err != nil {
		return outboxdriver.Delivery{}, nil, err
	}
	return d, attempts, nil
}

// ListDeliveries implements outboxdriver.Store. An event's deliveries are read by
// its index; an endpoint's log walks the endpoint's listing index (or a state's
// partial index); an account's log merges its endpoints' logs (migration 0003: no
// index by account), each read newest first as far as the page needs.
func (s *Store) ListDeliveries(ctx context.Context, q outboxdriver.DeliveryQuery) ([]outboxdriver.Delivery, error) {
	args := []any{q.Account}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var where string
	for _, f := range []struct{ col, v string }{
		{"endpoint_id", q.EndpointID}, {"event_id", q.EventID}, {"event_type", q.Type}, {"status", string(q.Status)},
	} {
		if f.v != "" {
			where += fmt.Sprintf(` AND d.%s = %s`, f.col, arg(f.v))
		}
	}
	if q.BeforeID != "" {
		where += fmt.Sprintf(` AND (d.created_at, d.id) < (SELECT created_at, id FROM outbox_deliveries WHERE id = %s AND account = $1)`, arg(q.BeforeID))
	}
	order := ` ORDER BY d.created_at DESC, d.id DESC LIMIT ` + arg(q.Limit)
	query := `SELECT ` + leasedColumns + ` FROM outbox_deliveries d WHERE d.account = $1` + where + order
	if q.EndpointID == "" && q.EventID == "" {
		query = `SELECT ` + leasedColumns + ` FROM outbox_endpoints e CROSS JOIN LATERAL (
			SELECT ` + leasedColumns + ` FROM outbox_deliveries d WHERE d.endpoint_id = e.id AND d.account = $1` + where + order + `) d
			WHERE e.account = $1` + order
	}
	return scanDeliveries(s.read().query(ctx, s.q(query), args...))
}

// UpdateDelivery implements outboxdriver.Store.
func (s *Store) UpdateDelivery(ctx context.Context, p outboxdriver.UpdateDeliveryParams) (outboxdriver.Delivery, error) {
	var out outboxdriver.Delivery
	err := s.write(ctx, func(q querier) error {
		d, err := s.getDelivery(ctx, q, p.ID)
		if err != nil {
			return err
		}
		if d.Account != p.Account {
			return notFound("delivery", p.ID)
		}
		b := s.newBatch(q)
		if err := b.lock(ctx, []string{p.ID}, ""); err != nil {
			return err
		}
		if _, err := deliverybatch.Apply(ctx, &b.Batch, b, p.ID, nil, p.Decide); err != nil {
			return err
		}
		if err := b.Flush(ctx); err != nil {
			return err
		}
		out, err = s.getDelivery(ctx, q, p.ID)
		return err
	})
	return out, err
}

// Recover implements outboxdriver.Store.
func (s *Store) Recover(ctx context.Context, p outboxdriver.RecoverParams) (int, error) {
	var n int64
	err := s.write(ctx, func(q querier) error {
		// Locked: an endpoint removed meanwhile gets nothing back.
		_, err := s.accountEndpoint(ctx, q, p.Account, p.EndpointID, "FOR UPDATE")
		if err != nil {
			return err
		}
		n, err = q.exec(ctx, s.q(`UPDATE outbox_deliveries SET status = 'PENDING', run_start = attempts,
			next_attempt_at = $1, fault_since = NULL, last_error = '', updated_at = $1
			WHERE account = $2 AND endpoint_id = $3 AND status = 'FAILED' AND created_at >= $4`),
			p.Now, p.Account, p.EndpointID, p.Since)
		if err != nil {
			return err
		}
		if p.Audit != nil {
			entry := *p.Audit
			entry.Count = int(n)
			if err := s.insertAudit(ctx, q, []outboxdriver.AuditEntry{entry}); err != nil {
				return err
			}
		}
		if n == 0 {
			return nil
		}
		return s.sendWakeup(ctx, q)
	})
	return int(n), err
}

// Purge implements outboxdriver.Store. Purges on every node may run at once: each
// takes rows SKIP LOCKED, so they delete disjoint batches.
func (s *Store) Purge(ctx context.Context, p outboxdriver.PurgeParams) (deliveries, events int, err error) {
	err = s.write(ctx, func(q querier) error {
		// Each endpoint's oldest, on its listing index (migration 0003: no index by
		// creation time alone); rows another purge holds are skipped.
		ids, err := scanStrings(q.query(ctx, s.q(`DELETE FROM outbox_deliveries WHERE id IN (
			SELECT d.id FROM outbox_endpoints e CROSS JOIN LATERAL (
				SELECT id FROM outbox_deliveries d WHERE d.endpoint_id = e.id AND d.created_at < $1 AND d.lease_until IS NULL
				ORDER BY d.created_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
			LIMIT $2)
			RETURNING id`), p.Before, p.Limit))
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			if _, err := q.exec(ctx, s.q(`DELETE FROM outbox_attempts WHERE delivery_id = ANY($1)`), ids); err != nil {
				return err
			}
		}
		n, err := q.exec(ctx, s.q(`DELETE FROM outbox_events WHERE (account, id) IN (
			SELECT v.account, v.id FROM outbox_events v WHERE v.stored_at < $1
			AND NOT EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.account = v.account AND d.event_id = v.id)
			ORDER BY v.stored_at LIMIT $2 FOR UPDATE SKIP LOCKED)`), p.Before, p.Limit)
		if err != nil {
			return err
		}
		deliveries, events = len(ids), int(n)
		if p.KeysBefore.IsZero() {
			return nil
		}
		_, err = q.exec(ctx, s.q(`DELETE FROM outbox_idempotency_keys WHERE (account, key) IN (
			SELECT account, key FROM outbox_idempotency_keys WHERE created_at < $1
			ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`), p.KeysBefore, p.Limit)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return deliveries, events, nil
}
