package featureserver

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// purgeBatch bounds the call records one purge statement removes, so that a purge
// of a large backlog never holds the database for long; purgeInterval is how often
// the node looks for expired records.
const (
	purgeBatch    = 500
	purgeInterval = time.Minute
)

// retain purges expired call records and ended console sessions at once and then every purgeInterval, until
// ctx ends.
func (n *Node) retain(ctx context.Context) {
	t := time.NewTicker(purgeInterval)
	defer t.Stop()
	for {
		now := time.Now()
		if removed, err := n.purgeExpired(ctx, now, purgeBatch); err != nil && ctx.Err() == nil {
			n.log.Warn().Err(err).Msg("purging expired call records failed")
		} else if removed > 0 {
			n.log.Info().Int("removed", removed).Dur("retention", n.cfg.CallRetention).Msg("purged expired call records")
		}
		// Ended console sessions are refused when used; this only drops their rows.
		if _, err := n.store.PurgeSessions(ctx, nodestore.PurgeSessionsParams{Now: now, IdleBefore: now.Add(-consoleSessionIdle)}); err != nil && ctx.Err() == nil {
			n.log.Warn().Err(err).Msg("purging ended console sessions failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// purgeExpired removes the records of ended calls created more than CallRetention
// before now, batch records at a time, until a batch finds fewer, and returns how
// many it removed.
func (n *Node) purgeExpired(ctx context.Context, now time.Time, batch int) (int, error) {
	p := nodestore.PurgeCallsParams{Before: now.Add(-n.cfg.CallRetention), Limit: batch}
	total := 0
	for {
		removed, err := n.store.PurgeCalls(ctx, p)
		total += removed
		if err != nil || removed < batch {
			return total, err
		}
	}
}
