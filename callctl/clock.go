package callctl

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// callClock is a call's time (docs/call-control.md §4b): Now stamps the call's
// timeline and measures its length; Sleep lets time pass for the call (media, retry
// delays between hook attempts, reconnect backoff) and returns early with ctx's error
// when ctx ends. Every call gets its own, made in newCall, and hands its Sleep to each
// hook request and WebSocket dial it makes: nothing reaches a call's time through its
// context.
//
// A call runs on a simulatedClock unless Options.RealTime puts it on the wallClock (a
// node, `simulate --real-time`). Waits for the network (ack timeouts, the idle limit)
// are real on both.
type callClock interface {
	retry.Clock
	Sleep(ctx context.Context, d time.Duration) error
	// Real reports whether Sleep waits on the wall clock: a call's waits then also
	// watch for what must cut them short (wait.go).
	Real() bool
}

// simulatedClock is real elapsed time (network I/O is real) plus the simulated time
// of media (say, play, pause, gather timeouts, dial durations) and of retry delays,
// which Sleep adds at once. So a call's timeline reads like the real call would,
// while a 30-minute call runs in milliseconds. It is used by the call's goroutine
// only.
type simulatedClock struct {
	real    retry.Clock
	skipped time.Duration // simulated time added by Sleep
}

func newSimulatedClock(real retry.Clock) *simulatedClock { return &simulatedClock{real: real} }

// Now is the real time plus the simulated time that has passed.
func (c *simulatedClock) Now() time.Time { return c.real.Now().Add(c.skipped) }

// Sleep moves simulated time forward by d at once. Nothing is waited for, so it never
// stops early: it returns nil even when ctx has ended.
func (c *simulatedClock) Sleep(_ context.Context, d time.Duration) error {
	if d > 0 {
		c.skipped += d
	}
	return nil
}

func (c *simulatedClock) Real() bool { return false }

// wallClock is the time of a call that runs as a production feature server's would:
// everything it waits for passes for real, and its timeline reports real time. It
// reads the time the timers run on (time.Now: the fake clock of a testing/synctest
// bubble in tests), not Options.Clock, so that a wait always ends.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Sleep waits d, or until ctx ends.
func (wallClock) Sleep(ctx context.Context, d time.Duration) error { return transport.Sleep(ctx, d) }

func (wallClock) Real() bool { return true }

// retryWait is the wait before a hook request's or a WebSocket dial's attempt (1 for
// the first, as numbered on the timeline): recorded as hook.retry, then passed on
// the call's clock. A call whose context ended records nothing and waits no more. On
// the wall clock the wait is cut short, with errInterrupted, by live call control and
// by the call's deadline (wait.go): the request then gives up without an alert.
func (c *callRun) retryWait(ctx context.Context, url string, attempt int, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.record(Event{Kind: KindHookRetry, URL: url, Attempt: attempt, Delay: d})
	if !c.clock.Real() {
		return c.clock.Sleep(ctx, d)
	}
	return c.await(ctx, d, false)
}
