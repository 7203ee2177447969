package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/switchboard-voice/switchboard/outbox"
)

// CreateEndpoint implements outbox.Store.
func (s *Store) CreateEndpoint(ctx context.Context, ep outbox.Endpoint, audit outbox.AuditEntry) error {
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
			return fmt.Errorf("%w: endpoint %s exists", outbox.ErrConflict, ep.ID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_endpoints (`+endpointColumns+`)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
			return err
		}
		return insertAudit(ctx, tx, []outbox.AuditEntry{audit})
	})
}

// GetEndpoint implements outbox.Store.
func (s *Store) GetEndpoint(ctx context.Context, account, id string) (outbox.Endpoint, error) {
	ep, err := getEndpoint(ctx, s.read(), id)
	if err != nil {
		return outbox.Endpoint{}, err
	}
	if ep.Account != account || ep.RemovedAt != nil {
		return outbox.Endpoint{}, notFound("endpoint", id)
	}
	return ep, nil
}

// getEndpoint reads an endpoint by id whatever its account, removed ones included.
func getEndpoint(ctx context.Context, q querier, id string) (outbox.Endpoint, error) {
	var sc endpointScan
	err := q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints WHERE id = ?`, id).Scan(sc.dest()...)
	if isNoRows(err) {
		return outbox.Endpoint{}, notFound("endpoint", id)
	}
	if err != nil {
		return outbox.Endpoint{}, err
	}
	return sc.endpoint()
}

// ListEndpoints implements outbox.Store.
func (s *Store) ListEndpoints(ctx context.Context, account string) ([]outbox.Endpoint, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = ? AND removed_at IS NULL ORDER BY created_at, id`, account)
	if err != nil {
		return nil, err
	}
	return scanEndpoints(rows)
}

func scanEndpoints(rows *sql.Rows) ([]outbox.Endpoint, error) {
	defer rows.Close()
	var out []outbox.Endpoint
	for rows.Next() {
		var sc endpointScan
		if err := rows.Scan(sc.dest()...); err != nil {
			return nil, err
		}
		ep, err := sc.endpoint()
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, rows.Err()
}

// UpdateEndpoint implements outbox.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, account, id string, change func(outbox.Endpoint) (outbox.Change, error)) (outbox.Endpoint, error) {
	var result outbox.Endpoint
	err := s.write(ctx, func(tx querier) error {
		ep, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return err
		}
		if ep.Account != account || ep.RemovedAt != nil {
			return notFound("endpoint", id)
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
		return outbox.Endpoint{}, err
	}
	return result, nil
}

// updateEndpointSQL sets every column of an endpoint but id, account and created_at.
const updateEndpointSQL = `UPDATE outbox_endpoints SET url = ?, events = ?, api_version = ?,
	secrets = ?, profile = ?, overrides = ?, managed = ?, status = ?, failures = ?, failing_since = ?,
	last_delivery_at = ?, paused_at = ?, pause_reason = ?, disabled_at = ?, hold_until = ?,
	removed_at = ?, in_flight_cap = ? WHERE id = ?`

// applyChange writes a Change about delivery deliveryID ("" for none) of endpoint
// endpointID.
// moveWaitingSQL gives an endpoint's waiting deliveries (pending, not leased) the
// status a pause or a disable sets, except the delivery whose attempt caused it. It
// walks the endpoint's PENDING index (migration 0003).
const moveWaitingSQL = `UPDATE outbox_deliveries SET status = ?, last_error = ?, updated_at = ?
WHERE endpoint_id = ? AND status = 'PENDING' AND lease_until IS NULL AND id != ?`

func applyChange(ctx context.Context, tx querier, ch outbox.Change, deliveryID, endpointID string) error {
	if d := ch.Delivery; d != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_deliveries SET status = ?, attempts = ?, run_start = ?,
			next_attempt_at = ?, fault_since = ?, last_error = ?, updated_at = ?, lease_until = NULL, lease_token = NULL
			WHERE id = ?`, string(d.Status), d.Attempts, d.RunStart, micros(d.NextAttemptAt), microsPtr(d.FaultSince),
			d.LastError, micros(d.UpdatedAt), d.ID); err != nil {
			return fmt.Errorf("sqlitestore: update delivery: %w", err)
		}
		deliveryID = d.ID
	}
	if a := ch.Attempt; a != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (`+attemptColumns+`) VALUES (?,?,?,?,?,?,?,?,?)`,
			attemptArgs(*a)...); err != nil {
			return fmt.Errorf("sqlitestore: insert attempt: %w", err)
		}
	}
	if ep := ch.Endpoint; ep != nil {
		args, err := endpointArgs(*ep)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, updateEndpointSQL,
			append(append(args[2:18:18], args[19]), ep.ID)...); err != nil {
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

func insertAudit(ctx context.Context, tx querier, entries []outbox.AuditEntry) error {
	for _, a := range entries {
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_audit (account, endpoint_id, action, reason, at)
			VALUES (?, ?, ?, ?, ?)`, a.Account, a.EndpointID, a.Action, a.Reason, micros(a.At)); err != nil {
			return fmt.Errorf("sqlitestore: insert audit: %w", err)
		}
	}
	return nil
}

// ListAudit implements outbox.Store.
func (s *Store) ListAudit(ctx context.Context, account string, limit int) ([]outbox.AuditEntry, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT id, account, endpoint_id, action, reason, at FROM outbox_audit
		WHERE account = ? ORDER BY id DESC LIMIT ?`, account, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []outbox.AuditEntry
	for rows.Next() {
		var (
			a  outbox.AuditEntry
			us int64
		)
		if err := rows.Scan(&a.ID, &a.Account, &a.EndpointID, &a.Action, &a.Reason, &us); err != nil {
			return nil, err
		}
		a.At = fromMicros(us)
		out = append(out, a)
	}
	return out, rows.Err()
}
