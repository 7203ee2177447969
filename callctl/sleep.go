package callctl

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
)

type callKey struct{}

// requestScope is the hook request a retry delay belongs to.
type requestScope struct {
	call     *callRun
	url      string
	attempts int // attempts made so far
}

func withCall(ctx context.Context, c *callRun) context.Context {
	return context.WithValue(ctx, callKey{}, &requestScope{call: c})
}

func withRequest(ctx context.Context, c *callRun, url string) (context.Context, *requestScope) {
	s := &requestScope{call: c, url: url}
	return context.WithValue(ctx, callKey{}, s), s
}

// SimulatedSleep is the Sleep to give a transport.HookClient shared by simulated
// calls: inside a call's hook request the retry delay passes on that call's
// simulated clock, at once, and is recorded as a hook.retry event; outside a call it
// is a real wait. It returns ctx's error when ctx has ended.
func SimulatedSleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, ok := ctx.Value(callKey{}).(*requestScope)
	if !ok {
		return transport.Sleep(ctx, d)
	}
	s.call.record(Event{Kind: KindHookRetry, URL: s.url, Attempt: s.attempts + 1, Delay: d})
	s.call.clock.Advance(d)
	return nil
}
