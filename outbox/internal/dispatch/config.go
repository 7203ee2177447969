package dispatch

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// Config is what a Dispatcher needs of the outbox: its values come from outbox.Config,
// already defaulted and validated there, so it has no defaults of its own.
type Config struct {
	// Store is the outbox's store, its errors already wrapped as the outbox reports
	// them.
	Store outboxdriver.Store
	// Workers, BatchSize, LeaseDuration and PollInterval are outbox.Config's.
	Workers       int
	BatchSize     int
	LeaseDuration time.Duration
	PollInterval  time.Duration
	Clock         retry.Clock
	Rand          retry.Rand
	Logger        zerolog.Logger
	// Attempt makes the HTTP attempt of job under p. Its ctx ends when the outbox gives
	// up waiting for attempts at Close; the attempt is then released, not counted.
	Attempt func(ctx context.Context, job outboxdriver.Job, p policy.Policy) decide.Result
	// Observe, when set, sees every attempt once it is recorded (outbox.Config.Observe).
	Observe func(d outboxdriver.Delivery, a outboxdriver.Attempt)
	// Notify sees each audit entry of a recorded decision (a pause, a disable, a
	// removal) with the endpoint's URL, once it is stored. It must not block.
	Notify func(entry outboxdriver.AuditEntry, url string)
	// Wake nudges the claim loop: a publish, a resume, a retry. The dispatcher nudges
	// it too, after each batch it records.
	Wake chan struct{}
	// Wakeups, when not nil, nudges the claim loop for what other processes sharing
	// the database published (outboxdriver.Waker); polling stays the fallback.
	Wakeups <-chan struct{}
}

// Now is the engine's time on clock, truncated to microseconds so that what is stored
// and what is returned compare equal in every store.
func Now(clock retry.Clock) time.Time { return clock.Now().UTC().Truncate(time.Microsecond) }

// nudge wakes the claim loop without blocking.
func (d *Dispatcher) nudge() {
	select {
	case d.cfg.Wake <- struct{}{}:
	default:
	}
}

// notice is an audit entry to pass to Config.Notify.
type notice struct {
	entry outboxdriver.AuditEntry
	url   string
}

// noticesOf are the notices of ch, a decision about a delivery of ep: its audit
// entries, each about the endpoint as the decision left it.
func noticesOf(ch outboxdriver.Change, ep outboxdriver.Endpoint) []notice {
	if len(ch.Audit) == 0 {
		return nil
	}
	url := ep.URL
	if ch.Endpoint != nil {
		url = ch.Endpoint.URL
	}
	out := make([]notice, len(ch.Audit))
	for i, e := range ch.Audit {
		out[i] = notice{entry: e, url: url}
	}
	return out
}
