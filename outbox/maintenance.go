package outbox

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// reapBatch bounds the deliveries one reap pass settles.
const reapBatch = 500

// Reap settles deliveries whose lease expired (their process stopped mid-attempt):
// each is due again at once with the lost attempt counted, or ends FAILED (DEAD under
// ReapDead) when that was its last attempt. It returns how many it settled; on a
// store error or an ended ctx, what it settled before, with the error. Start runs it
// every Config.ReapInterval.
func (o *Outbox) Reap(ctx context.Context) (int, error) {
	now := o.now()
	total := 0
	for {
		n, err := o.store.Reap(ctx, outboxdriver.ReapParams{Now: now, Limit: reapBatch, Decide: func(d Delivery, ep Endpoint) (outboxdriver.Change, error) {
			return decide.Reaped(o.policyOf(ep), d, ep, now), nil
		}})
		total += n
		if err != nil || n < reapBatch {
			if total > 0 {
				o.nudge()
			}
			return total, err
		}
	}
}

// Purge deletes events, deliveries and attempts older than the retention window
// (and Idempotency-Keys older than IdempotencyWindow), in
// batches of Config.PurgeBatch rows so that no transaction holds the database long.
// On a store error or an ended ctx it stops between batches and returns what it
// deleted before, with the error. Start runs it every Config.PurgeInterval.
func (o *Outbox) Purge(ctx context.Context) (deliveries, events int, err error) {
	before := o.now().Add(-o.cfg.Retention)
	for {
		d, e, err := o.store.Purge(ctx, outboxdriver.PurgeParams{Before: before, Limit: o.cfg.PurgeBatch,
			KeysBefore: o.now().Add(-IdempotencyWindow)})
		deliveries += d
		events += e
		if err != nil || d < o.cfg.PurgeBatch && e < o.cfg.PurgeBatch {
			return deliveries, events, err
		}
		select {
		case <-ctx.Done():
			return deliveries, events, ctx.Err()
		case <-time.After(10 * time.Millisecond): // let deliveries write between batches
		}
	}
}

func (o *Outbox) reapOnce(ctx context.Context) {
	if n, err := o.Reap(ctx); err != nil && ctx.Err() == nil {
		o.log.Error().Err(err).Msg("outbox: reap failed")
	} else if n > 0 {
		o.log.Warn().Int("deliveries", n).Msg("outbox: reclaimed expired leases")
	}
}

func (o *Outbox) purgeOnce(ctx context.Context) {
	if d, e, err := o.Purge(ctx); err != nil && ctx.Err() == nil {
		o.log.Error().Err(err).Msg("outbox: retention purge failed")
	} else if d+e > 0 {
		o.log.Info().Int("deliveries", d).Int("events", e).Msg("outbox: purged past retention")
	}
}
