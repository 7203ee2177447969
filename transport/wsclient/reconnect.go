package wsclient

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
)

// Reconnector reopens a call's WebSocket after mid-call drops (docs/call-control.md §4).
// Each call to Next is one reconnect episode. callctl sends session:reconnect itself
// on the connection Next returns.
type Reconnector struct {
	target   fragment.Target
	opts     Options
	ownHTTP  bool
	episodes atomic.Int64
}

// NewReconnector prepares reconnect episodes for target (the application URL whose
// connection dropped). It fails only for Options out of range (ErrInvalidOptions).
func NewReconnector(target fragment.Target, opts Options) (*Reconnector, error) {
	o, own, err := opts.prepared()
	if err != nil {
		return nil, err
	}
	return &Reconnector{target: target, opts: o, ownHTTP: own}, nil
}

// Next runs one reconnect episode: up to rc attempts, each preceded by the ramp
// restarted for this episode (0.5, 1, 2, 4, 6 s), and returns the new connection or
// a *DialError. Every connection failure class is retried, handshake timeouts
// included, and so are 5xx upgrade answers (a proxy answering 502/503 while the
// application restarts is the usual cause of a drop); 4xx answers only when rp has
// 4xx or all; 3xx and unusable upgrades only under all; egress refusals and
// permanent faults never. With rc=0 it makes no attempt and returns a *DialError
// wrapping ErrNoReconnectBudget. Next must not be called concurrently.
func (r *Reconnector) Next(ctx context.Context) (*Conn, error) {
	ep := r.episodes.Add(1)
	if r.ownHTTP {
		defer r.opts.HTTPClient.CloseIdleConnections()
	}
	p := r.target.Policy
	if p.RetryCount < 1 {
		return nil, &DialError{Err: fmt.Errorf("episode %d: %w", ep, ErrNoReconnectBudget)}
	}
	conn, err := dialWithRetries(ctx, r.target, r.opts, episodePolicy(p), fragment.RampDelay(1))
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// Episodes returns the number of episodes started so far.
func (r *Reconnector) Episodes() int { return int(r.episodes.Load()) }

// episodePolicy: rc attempts; the first waits RampDelay(1) (done by the caller), so
// the wait before attempt n+1 is RampDelay(n+1).
func episodePolicy(p fragment.Policy) retry.Policy {
	return retry.Policy{
		MaxAttempts: p.RetryCount,
		Schedule:    shiftedRamp{},
		Retryable: func(c retry.Class) bool {
			switch c {
			case retry.Connect, retry.HandshakeTimeout, retry.Status5xx:
				return true
			}
			return retry.CoveredBy(c, p)
		},
	}
}

// shiftedRamp is the ramp one step ahead: the episode's first wait is taken before
// its first attempt.
type shiftedRamp struct{}

func (shiftedRamp) Delay(k int) (time.Duration, bool) {
	if k < 1 {
		return 0, false
	}
	return fragment.RampDelay(k + 1), true
}
