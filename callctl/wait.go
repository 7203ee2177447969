package callctl

import (
	"context"
	"errors"
	"time"
)

// errInterrupted is what a wait on the wall clock returns when something the call
// must react to at once cut it short (docs/call-control.md §4b): live call control, a
// command of the application that replaces the call's verbs or ends it, the caller
// hanging up, the call's length limit. What waited (a verb's media, a hook's retry
// delay, a reconnect's backoff) gives up without an alert; the call then applies
// what interrupted it.
var errInterrupted = errors.New("callctl: wait cut short by the call")

// interrupted reports whether a hook failed only because a wait of the call cut it
// short (errInterrupted): no failure of the application, so no alert.
func interrupted(err error) bool { return errors.Is(err, errInterrupted) }

// spend lets d pass on media, on the call's clock. It returns false when the caller
// hung up (or the call hit its maximum length) meanwhile, the call having then ended,
// when the wait was cut short (errInterrupted), or when ctx ended first (the call
// notices between verbs).
func (c *callRun) spend(ctx context.Context, d time.Duration) bool {
	if c.ended || c.cut {
		return false
	}
	end := addDuration(c.elapsed(), d)
	if _, _, ok := c.dueUtterance(); ok {
		// The caller speaks meanwhile to what listens in the background (a bargeIn,
		// a transcription): heard at its time, which may cut the verb short.
		gen := c.generation
		if !c.hearDue(ctx, end) || c.generation != gen {
			return false
		}
	}
	return c.await(ctx, max(end-c.elapsed(), 0), true) == nil
}

// await lets d pass on the call's clock; when the call's deadline (the caller hangs
// up, its maximum length) comes first, it waits until then and hangs up, returning
// errInterrupted. listen lets a WebSocket application's messages be handled while a
// wall-clock wait lasts (pass).
func (c *callRun) await(ctx context.Context, d time.Duration, listen bool) error {
	if !c.ended {
		now := c.elapsed()
		if limit, reason := c.deadline(); limit > 0 && addDuration(now, d) >= limit {
			if err := c.pass(ctx, limit-now, listen); err != nil {
				return err
			}
			c.hangup(reason)
			return errInterrupted
		}
	}
	return c.pass(ctx, d, listen)
}

// pass lets d pass. On the simulated clock it passes at once. On the wall clock it is
// a real wait that ends early with errInterrupted when live call control arrives (a
// hangup is applied at once; a mute is applied and the wait goes on; a redirect is
// left for execute to apply) and, with listen, when a message of a WebSocket
// application, handled as it comes, ends the call or replaces its verbs. A call that
// had ended before the wait (its final status notification retrying) just waits.
func (c *callRun) pass(ctx context.Context, d time.Duration, listen bool) error {
	if !c.clock.Real() {
		return c.clock.Sleep(ctx, d)
	}
	if c.ended {
		return c.clock.Sleep(ctx, d)
	}
	until := c.clock.Now().Add(d)
	for {
		left := until.Sub(c.clock.Now())
		if left <= 0 {
			return nil
		}
		wctx, stop := c.controls.waitContext(ctx, c.opts.Control)
		if listen {
			_ = c.app.listen(wctx, left)
		} else {
			_ = c.clock.Sleep(wctx, left)
		}
		stop()
		if err := ctx.Err(); err != nil {
			return err
		}
		c.urgentControls()
		if c.ended || c.cut || c.overLimit() {
			return errInterrupted
		}
	}
}

// urgentControls applies, in the middle of a wall-clock wait, the controls that
// arrived: a hangup ends the call and a mute is recorded at once; a redirect stays in
// the inbox for execute and cuts the current verb short (c.cut).
func (c *callRun) urgentControls() {
	var later []Control
	for _, ctl := range c.controls.take() {
		if ctl.Redirect != "" && ctl.ChildCallHook == "" {
			later = append(later, ctl)
			continue
		}
		if !c.ended {
			c.applyControl(c.ctx, ctl)
		}
	}
	if len(later) > 0 {
		c.controls.putBack(later)
		c.cut = true
	}
}

// cutShort marks the current verb as cut short by a command of the application that
// replaced the call's verbs: on the wall clock the verb stops (jambonz kills the task
// that runs when the application is replaced); on the simulated clock media takes no
// time, and the command applies between verbs as before.
func (c *callRun) cutShort() {
	if c.clock.Real() {
		c.cut = true
	}
}
