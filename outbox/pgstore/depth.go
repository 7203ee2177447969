package pgstore

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// QueueDepth counts the deliveries by state in one read of the deliveries table.
func (s *Store) QueueDepth(ctx context.Context, now time.Time) (outboxdriver.QueueDepth, error) {
	var d outboxdriver.QueueDepth
	var oldest *time.Time
	err := s.read().queryRow(ctx, s.q(`
SELECT
  count(*) FILTER (WHERE d.status = 'PENDING' AND e.status = 'ACTIVE' AND (e.hold_until IS NULL OR e.hold_until <= $1)),
  count(*) FILTER (WHERE d.status = 'PENDING' AND NOT (e.status = 'ACTIVE' AND (e.hold_until IS NULL OR e.hold_until <= $1))),
  count(*) FILTER (WHERE d.status IN ('FAILED', 'DEAD')),
  min(d.next_attempt_at) FILTER (WHERE d.status = 'PENDING' AND d.lease_until IS NULL AND d.next_attempt_at <= $1
      AND e.status = 'ACTIVE' AND (e.hold_until IS NULL OR e.hold_until <= $1))
FROM outbox_deliveries d JOIN outbox_endpoints e ON e.id = d.endpoint_id
WHERE d.status IN ('PENDING', 'FAILED', 'DEAD') AND e.removed_at IS NULL`), now).Scan(&d.Pending, &d.Held, &d.Failed, &oldest)
	if err != nil {
		return outboxdriver.QueueDepth{}, err
	}
	if oldest != nil {
		d.OldestDue = *oldest
	}
	return d, nil
}
