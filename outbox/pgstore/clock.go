package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-voice/switchboard/retry"
)

// dbClock tells the database server's time: read from it, then carried forward on
// this process's monotonic clock, so that the local wall clock's errors and steps
// do not show (docs/outbox.md §5). Read again every Options.ClockSync.
type dbClock struct {
	mu sync.Mutex
	// at is the server's time when the local monotonic reading base was taken.
	at   time.Time
	base time.Time
}

var _ retry.Clock = (*dbClock)(nil)

// Now implements retry.Clock.
func (c *dbClock) Now() time.Time {
	c.mu.Lock()
	at, base := c.at, c.base
	c.mu.Unlock()
	return at.Add(time.Since(base))
}

// readClock reads the server's time, three times, and keeps the reading with the
// shortest round trip, taking the server's time to be at its middle.
func readClock(ctx context.Context, pool *pgxpool.Pool) (*dbClock, error) {
	c := &dbClock{}
	if err := c.read(ctx, pool); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *dbClock) read(ctx context.Context, pool *pgxpool.Pool) error {
	var best time.Duration = -1
	var at, base time.Time
	for range 3 {
		sent := time.Now()
		var server time.Time
		if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&server); err != nil {
			return fmt.Errorf("pgstore: read the database's clock: %w", err)
		}
		rtt := time.Since(sent)
		if best < 0 || rtt < best {
			best, at, base = rtt, server.UTC(), sent.Add(rtt/2)
		}
	}
	c.mu.Lock()
	c.at, c.base = at, base
	c.mu.Unlock()
	return nil
}

// Clock returns the database's time as this process sees it, within half a round
// trip to the server: the engine's clock on PostgreSQL (outboxdriver.Clocked), so that
// the schedules, holds and leases it computes agree with the now() the store's
// statements compare them with, whatever this machine's clock says.
func (s *Store) Clock() retry.Clock { return s.clock }

// syncClock reads the database's clock again every ClockSync until ctx ends.
func (s *Store) syncClock(ctx context.Context) {
	t := time.NewTicker(s.opts.ClockSync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.clock.read(ctx, s.pool); err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn().Err(err).Msg("pgstore: reading the database's clock failed; keeping the last reading")
			}
		}
	}
}
