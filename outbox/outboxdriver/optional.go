package outboxdriver

import (
	"context"

	"github.com/switchboard-voice/switchboard/retry"
)

// Interfaces a Store may implement besides Store; the engine uses them when it finds
// them (docs/outbox.md §5).

// Waker is a Store that tells when deliveries may have become claimable through
// another process sharing its database (a publish committed on another node): the
// PostgreSQL store, with LISTEN/NOTIFY. The dispatcher claims at once when woken and
// still polls every PollInterval, so a wake-up that is lost or late costs latency,
// never a delivery.
type Waker interface {
	// Wakeups returns a channel that receives when deliveries may have been stored
	// or made due by anyone, until ctx ends. A receiver busy when several arrive gets
	// one. The channel is never closed.
	Wakeups(ctx context.Context) <-chan struct{}
}

// Clocked is a Store that keeps the time its rows are compared against: the engine
// takes that clock when its configuration sets none, so that the times it computes
// (schedules, holds, the lease it checks before an attempt) agree with the store's
// wherever the process runs. The PostgreSQL store's is the database server's clock.
type Clocked interface {
	Clock() retry.Clock
}
