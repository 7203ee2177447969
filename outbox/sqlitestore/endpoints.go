package sqlitestore

import (
	"context"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// CreateEndpoint implements outboxdriver.Store.
func (s *Store) CreateEndpoint(ctx context.Context, p outboxdriver.CreateEndpointParams) error {
	ep := p.Endpoint
	args, err := endpointArgs(ep)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx querier) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM outbox_endpoints WHERE id = ?`, ep.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: endpoint %s exists", outboxdriver.ErrConflict, ep.ID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_endpoints (`+endpointColumns+`)
			VALUES `+rowsSQL(1, len(args)), args...); err != nil {
			return err
		}
		return insertAudit(ctx, tx, []outboxdriver.AuditEntry{p.Audit})
	})
}

// GetEndpoint implements outboxdriver.Store.
func (s *Store) GetEndpoint(ctx context.Context, p outboxdriver.GetEndpointParams) (outboxdriver.Endpoint, error) {
	return accountEndpoint(ctx, s.read(), p.Account, p.ID)
}

// accountEndpoint reads the endpoint id of account: another account's, or a removed
// one, is ErrNotFound.
func accountEndpoint(ctx context.Context, q querier, account, id string) (outboxdriver.Endpoint, error) {
	ep, err := getEndpoint(ctx, q, id)
	if err != nil {
		return outboxdriver.Endpoint{}, err
	}
	if ep.Account != account || ep.RemovedAt != nil {
		return outboxdriver.Endpoint{}, notFound("endpoint", id)
	}
	return ep, nil
}

// getEndpoint reads an endpoint by id whatever its account, removed ones included.
func getEndpoint(ctx context.Context, q querier, id string) (outboxdriver.Endpoint, error) {
	return one(q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints WHERE id = ?`, id), scanEndpoint, "endpoint", id)
}

// ListEndpoints implements outboxdriver.Store.
func (s *Store) ListEndpoints(ctx context.Context, account string) ([]outboxdriver.Endpoint, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = ? AND removed_at IS NULL ORDER BY created_at, id`, account)
	return sqlrows.Collect(nil, rows, err, scanEndpoint)
}

// UpdateEndpoint implements outboxdriver.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, p outboxdriver.UpdateEndpointParams) (outboxdriver.Endpoint, error) {
	account, id, change := p.Account, p.ID, p.Change
	var result outboxdriver.Endpoint
	err := s.write(ctx, func(tx querier) error {
		ep, err := accountEndpoint(ctx, tx, account, id)
		if err != nil {
			return err
		}
		ch, err := change(ep)
		if err != nil {
			return err
		}
		if err := applyChange(ctx, tx, ch, "", ep.ID); err != nil {
			return err
		}
		result, err = getEndpoint(ctx, tx, id)
		return err
	})
	if err != nil {
		return outboxdriver.Endpoint{}, err
	}
	return result, nil
}

// updateEndpointSQL sets every column of an endpoint but id, account and created_at.
const updateEndpointSQL = `UPDATE outbox_endpoints SET url = ?, events = ?, api_version = ?,
	secrets = ?, profile = ?, overrides = ?, managed = ?, status = ?, failures = ?, failing_since = ?,
	last_delivery_at = ?, paused_at = ?, pause_reason = ?, disabled_at = ?, hold_until = ?,
	removed_at = ?, in_flight_cap = ?, headers = ?, channels = ?, filter = ?, rate_limit = ? WHERE id = ?`

// applyChange writes a Change about delivery deliveryID ("" for none) of endpoint
// endpointID.
// moveWaitingSQL gives an endpoint's waiting deliveries (pending, not leased) the
// status a pause or a disable sets, except the delivery whose attempt caused it. It
// walks the endpoint's PENDING index (migration 0003).
const moveWaitingSQL = `UPDATE outbox_deliveries SET status = ?, last_error = ?, updated_at = ?
WHERE endpoint_id = ? AND status = 'PENDING' AND lease_until IS NULL AND id != ?`

func applyChange(ctx context.Context, tx querier, ch outboxdriver.Change, deliveryID, endpointID string) error {
	if d := ch.Delivery; d != nil {
		// Its attempt becomes its latest, in its row (migration 0007).
		var latest *outboxdriver.Attempt
		if a := ch.Attempt; a != nil && a.DeliveryID == d.ID {
			latest = a
			if err := moveLatestAttempts(ctx, tx, []string{d.ID}); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, updateDeliveriesSQL(1), updateDeliveryValues(*d, latest)...); err != nil {
			return fmt.Errorf("sqlitestore: update delivery: %w", err)
		}
		deliveryID = d.ID
	}
	if a := ch.Attempt; a != nil && (ch.Delivery == nil || a.DeliveryID != ch.Delivery.ID) {
		if err := insertAttempts(ctx, tx, []outboxdriver.Attempt{*a}); err != nil {
			return err
		}
	}
	if ep := ch.Endpoint; ep != nil {
		args, err := endpointArgs(*ep)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, updateEndpointSQL,
			endpointUpdateArgs(args)...); err != nil {
			return fmt.Errorf("sqlitestore: update endpoint: %w", err)
		}
	}
	if ch.Waiting != "" {
		if _, err := tx.ExecContext(ctx, moveWaitingSQL,
			string(ch.Waiting), ch.WaitingReason, micros(ch.At), endpointID, deliveryID); err != nil {
			return fmt.Errorf("sqlitestore: update waiting deliveries: %w", err)
		}
	}
	return insertAudit(ctx, tx, ch.Audit)
}

func insertAudit(ctx context.Context, tx querier, entries []outboxdriver.AuditEntry) error {
	for _, a := range entries {
		actor := a.Actor
		if actor == "" {
			actor = outboxdriver.ActorSystem
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_audit (account, endpoint_id, delivery_id, action, actor, reason, count, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.Account, a.EndpointID, a.DeliveryID, a.Action, actor, a.Reason, a.Count, micros(a.At)); err != nil {
			return fmt.Errorf("sqlitestore: insert audit: %w", err)
		}
	}
	return nil
}

// ListAudit implements outboxdriver.Store.
func (s *Store) ListAudit(ctx context.Context, p outboxdriver.ListAuditParams) ([]outboxdriver.AuditEntry, error) {
	query := `SELECT id, account, endpoint_id, delivery_id, action, actor, reason, count, at FROM outbox_audit WHERE account = ?`
	args := []any{p.Account}
	if p.EndpointID != "" {
		query += ` AND endpoint_id = ?`
		args = append(args, p.EndpointID)
	}
	if p.BeforeID > 0 {
		query += ` AND id < ?`
		args = append(args, p.BeforeID)
	}
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, p.Limit)
	rows, err := s.read().QueryContext(ctx, query, args...)
	return sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (outboxdriver.AuditEntry, error) {
		var (
			a  outboxdriver.AuditEntry
			us int64
		)
		err := r.Scan(&a.ID, &a.Account, &a.EndpointID, &a.DeliveryID, &a.Action, &a.Actor, &a.Reason, &a.Count, &us)
		a.At = fromMicros(us)
		return a, err
	})
}
