package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// claimSQL leases due deliveries in one statement. It walks the due index in order,
// skips endpoints that are paused, disabled, removed, held or already at their
// in-flight cap, ranks what is left per endpoint so that the batch itself respects
// each cap, and leases the earliest. The scan window is a multiple of the batch so
// that one endpoint's backlog cannot fill it.
const claimSQL = `
WITH busy AS (
    SELECT endpoint_id, count(*) AS n FROM outbox_deliveries
    WHERE lease_until IS NOT NULL GROUP BY endpoint_id
),
due AS (
    SELECT d.id, d.endpoint_id, d.next_attempt_at, e.in_flight_cap - coalesce(b.n, 0) AS room
    FROM outbox_deliveries d
    JOIN outbox_endpoints e ON e.id = d.endpoint_id
    LEFT JOIN busy b ON b.endpoint_id = d.endpoint_id
    WHERE d.status = 'PENDING' AND d.lease_until IS NULL AND d.next_attempt_at <= :now
      AND e.status = 'ACTIVE' AND e.removed_at IS NULL
      AND (e.hold_until IS NULL OR e.hold_until <= :now)
      AND e.in_flight_cap > coalesce(b.n, 0)
    ORDER BY d.next_attempt_at
    LIMIT :scan
),
ranked AS (
    SELECT id, next_attempt_at, room,
           row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS rn
    FROM due
)
UPDATE outbox_deliveries SET lease_until = :lease, lease_token = :token
WHERE id IN (SELECT id FROM ranked WHERE rn <= room ORDER BY next_attempt_at, id LIMIT :limit)
RETURNING id`

// jobSQL reads what the attempts of one claim need.
var jobSQL = `SELECT ` + deliveryColumnsAs("d") + `, ` + endpointColumnsAs("e") + `,
    v.id, v.account, v.type, v.created_at, v.data
FROM outbox_deliveries d
JOIN outbox_endpoints e ON e.id = d.endpoint_id
JOIN outbox_events v ON v.id = d.event_id
WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.next_attempt_at, d.id`

// Claim implements outbox.Store.
func (s *Store) Claim(ctx context.Context, p outbox.ClaimParams) ([]outbox.Job, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var jobs []outbox.Job
	err := s.write(ctx, func(tx querier) error {
		rows, err := tx.QueryContext(ctx, claimSQL,
			sql.Named("now", micros(p.Now)), sql.Named("scan", 4*p.Limit), sql.Named("limit", p.Limit),
			sql.Named("lease", micros(p.LeaseUntil)), sql.Named("token", p.Token))
		if err != nil {
			return fmt.Errorf("sqlitestore: claim: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return err
		}
		list, _ := json.Marshal(ids)
		rows, err = tx.QueryContext(ctx, jobSQL, string(list))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				ds deliveryScan
				es endpointScan
				vs eventScan
			)
			dest := append(append(ds.dest(), es.dest()...), vs.dest()...)
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			ep, err := es.endpoint()
			if err != nil {
				return err
			}
			jobs = append(jobs, outbox.Job{Delivery: ds.delivery(), Endpoint: ep, Event: vs.event(), Token: p.Token})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// NextDue implements outbox.Store.
func (s *Store) NextDue(ctx context.Context) (time.Time, bool, error) {
	var v sql.NullInt64
	err := s.read().QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM outbox_deliveries
		WHERE status = 'PENDING' AND lease_until IS NULL`).Scan(&v)
	if err != nil || !v.Valid {
		return time.Time{}, false, err
	}
	return fromMicros(v.Int64), true, nil
}

// Complete implements outbox.Store.
func (s *Store) Complete(ctx context.Context, outcomes []outbox.Completion) ([]bool, error) {
	applied := make([]bool, len(outcomes))
	err := s.write(ctx, func(tx querier) error {
		clear(applied)
		for i, c := range outcomes {
			ok, err := decideAndApply(ctx, tx, c.DeliveryID, &c.Token, c.Decide)
			if err != nil && !errors.Is(err, outbox.ErrNotFound) {
				return err
			}
			applied[i] = ok // false: purged, or reaped and perhaps claimed again
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// decideAndApply reads a delivery and its endpoint, asks decide, and applies the
// Change. With a token, a delivery whose lease token differs is left alone (false).
func decideAndApply(ctx context.Context, tx querier, id string, token *string, decide outbox.DecideFunc) (bool, error) {
	var sc deliveryScan
	var lease sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+`, lease_token FROM outbox_deliveries WHERE id = ?`, id).
		Scan(append(sc.dest(), &lease)...)
	if isNoRows(err) {
		return false, notFound("delivery", id)
	}
	if err != nil {
		return false, err
	}
	if token != nil && lease.String != *token {
		return false, nil
	}
	d := sc.delivery()
	ep, err := getEndpoint(ctx, tx, d.EndpointID)
	if err != nil {
		return false, err
	}
	ch, err := decide(d, ep)
	if err != nil {
		return false, err
	}
	return true, applyChange(ctx, tx, ch, d.ID, ep.ID)
}

// Reap implements outbox.Store.
func (s *Store) Reap(ctx context.Context, now time.Time, limit int, decide outbox.DecideFunc) (int, error) {
	n := 0
	err := s.write(ctx, func(tx querier) error {
		n = 0
		rows, err := tx.QueryContext(ctx, `SELECT id FROM outbox_deliveries
			WHERE lease_until IS NOT NULL AND lease_until < ? AND status = 'PENDING'
			ORDER BY lease_until LIMIT ?`, micros(now), limit)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := decideAndApply(ctx, tx, id, nil, decide); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
