package outbox

import (
	"context"

	"github.com/switchboard-voice/switchboard/outbox/internal/dispatch"
)

// RunDue claims and attempts every delivery due at the configured clock's time, in
// batches, and records the outcomes, without starting any service: profile tests drive
// the engine step by step with an injected clock.
func (o *Outbox) RunDue(ctx context.Context) (int, error) {
	return dispatch.New(o.dispatchConfig(), ctx).RunDue(ctx)
}

// ClaimOnly leases due deliveries without attempting them, as a process that crashes
// right after claiming would.
func (o *Outbox) ClaimOnly(ctx context.Context) (int, error) {
	return dispatch.New(o.dispatchConfig(), ctx).ClaimOnly(ctx)
}

// ClaimingStopped is closed once Close has stopped claiming (after Start).
func (o *Outbox) ClaimingStopped() <-chan struct{} { return o.run.Done() }

// RunQueued claims due deliveries as the dispatcher does, calls wait (a test moves its
// clock there: the time the jobs waited in the queue for a worker), then runs and
// records them as the workers and the completer do.
func (o *Outbox) RunQueued(ctx context.Context, wait func()) (int, error) {
	return dispatch.New(o.dispatchConfig(), ctx).RunQueued(ctx, wait)
}
