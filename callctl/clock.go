package callctl

import (
	"context"
	"time"
)

// simClock is a call's clock: real elapsed time (network I/O is real) plus the
// simulated time of media (say, play, pause, gather timeouts, dial durations) and of
// retry delays, which advance it instantly. So a call's timeline reads like the real
// call would, while a 30-minute call runs in milliseconds.
type simClock struct {
	base      func() time.Time // the real clock
	realStart time.Time
	start     time.Time
	skipped   time.Duration // simulated time added by Advance
}

func newSimClock(base func() time.Time) *simClock {
	now := base()
	return &simClock{base: base, realStart: now, start: now}
}

// Now returns the simulated time.
func (c *simClock) Now() time.Time { return c.start.Add(c.Elapsed()) }

// Elapsed is the simulated time since the call started.
func (c *simClock) Elapsed() time.Duration {
	return c.base().Sub(c.realStart) + c.skipped
}

// Advance moves simulated time forward by d at once.
func (c *simClock) Advance(d time.Duration) {
	if d > 0 {
		c.skipped += d
	}
}

// Sleep is the retry sleeper of a call's hook requests and socket dials: the delay
// passes on the simulated clock, not in real time.
func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
