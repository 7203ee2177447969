package outboxdriver

import (
	"context"
	"time"
)

// QueueDepth is how much the outbox has left to do, as a node's /metrics shows it.
type QueueDepth struct {
	// Pending are deliveries waiting for an attempt on an endpoint that takes them.
	Pending int64
	// Held are deliveries waiting on an endpoint that is paused, disabled or under a
	// hold: they go out once it takes them again.
	Held int64
	// Failed are deliveries given up (FAILED or DEAD), until purged.
	Failed int64
	// OldestDue is when the longest-waiting pending delivery was due, when one is
	// due at now; zero when none is.
	OldestDue time.Time
}

// DepthCounter is a Store that counts its deliveries by state in one read: both
// stores of this module are, for a node's /metrics (the engine does not use it).
type DepthCounter interface {
	QueueDepth(ctx context.Context, now time.Time) (QueueDepth, error)
}
