package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// QueueDepth counts the deliveries by state in one read (the claim's indexes serve
// the due part; the counts read the deliveries table once).
func (s *Store) QueueDepth(ctx context.Context, now time.Time) (outboxdriver.QueueDepth, error) {
	var d outboxdriver.QueueDepth
	var pending, held, failed, oldest sql.NullInt64
	err := s.read().QueryRowContext(ctx, `
SELECT
  sum(CASE WHEN d.status = 'PENDING' AND e.status = 'ACTIVE' AND (e.hold_until IS NULL OR e.hold_until <= :now) THEN 1 ELSE 0 END),
  sum(CASE WHEN d.status = 'PENDING' AND NOT (e.status = 'ACTIVE' AND (e.hold_until IS NULL OR e.hold_until <= :now)) THEN 1 ELSE 0 END),
  sum(CASE WHEN d.status IN ('FAILED', 'DEAD') THEN 1 ELSE 0 END),
  min(CASE WHEN d.status = 'PENDING' AND d.lease_until IS NULL AND d.next_attempt_at <= :now AND e.status = 'ACTIVE'
      AND (e.hold_until IS NULL OR e.hold_until <= :now) THEN d.next_attempt_at END)
FROM outbox_deliveries d JOIN outbox_endpoints e ON e.id = d.endpoint_id
WHERE d.status IN ('PENDING', 'FAILED', 'DEAD') AND e.removed_at IS NULL`, sql.Named("now", micros(now))).Scan(&pending, &held, &failed, &oldest)
	if err != nil {
		return outboxdriver.QueueDepth{}, err
	}
	d.Pending, d.Held, d.Failed = pending.Int64, held.Int64, failed.Int64
	if oldest.Valid {
		d.OldestDue = fromMicros(oldest.Int64)
	}
	return d, nil
}
