package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// headerDeadline bounds connect and response headers together by one timeout
// (docs/call-control.md §3: JAMBONES_HTTP_TIMEOUT bounds "connect + response headers").
// The dialer and http.Transport bound each phase alone; without this, a slow
// connect followed by a slow answer could take twice the timeout. A deadline that
// passes before a connection was had is a connect failure (ct); after, a response
// timeout (rt). The body is not bounded here, but its read can be, by the same
// timer (boundRead): one timer an attempt.
type headerDeadline struct {
	base    http.RoundTripper
	timeout time.Duration
}

// errHeaderDeadline is the cause of a request cut by headerDeadline.
var errHeaderDeadline = errors.New("header deadline")

// deadlineError reports the passed deadline; it is a net.Error timeout.
type deadlineError struct {
	what    string
	timeout time.Duration
}

func (e *deadlineError) Error() string   { return fmt.Sprintf("no %s within %s", e.what, e.timeout) }
func (e *deadlineError) Timeout() bool   { return true }
func (e *deadlineError) Temporary() bool { return true }

func (h headerDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	a := &attemptDeadline{cancel: cancel}
	a.trace.GotConn = func(httptrace.GotConnInfo) { a.connected.Store(true) }
	ctx = httptrace.WithClientTrace(ctx, &a.trace)
	a.timer = time.AfterFunc(h.timeout, a.expire)
	resp, err := h.base.RoundTrip(req.WithContext(ctx))
	fired := !a.timer.Stop()
	if err != nil {
		defer cancel(nil)
		if fired && errors.Is(context.Cause(ctx), errHeaderDeadline) && req.Context().Err() == nil {
			if !a.connected.Load() {
				return nil, &ConnectError{Op: "dial", Addr: req.URL.Host, Err: &deadlineError{"connection", h.timeout}}
			}
			return nil, &deadlineError{"response headers", h.timeout}
		}
		return nil, err
	}
	a.body = resp.Body
	a.reusable = !fired
	resp.Body = a
	return resp, nil
}

// attemptDeadline is one attempt's timer and, once the headers are in, its body:
// closing it ends the attempt's context.
type attemptDeadline struct {
	cancel    context.CancelCauseFunc
	trace     httptrace.ClientTrace
	connected atomic.Bool
	timer     *time.Timer
	body      io.ReadCloser // set before the timer can run for the body (reusable)
	reusable  bool          // the timer was stopped before it fired
	reading   atomic.Bool   // the timer now bounds the body's read
	stalled   atomic.Bool   // it fired while the body was read
}

// expire is the timer's function: before the headers, it cuts the request; during a
// bounded read, it closes the body, which ends the read.
func (a *attemptDeadline) expire() {
	if !a.reading.Load() {
		a.cancel(errHeaderDeadline)
		return
	}
	a.stalled.Store(true)
	_ = a.Close()
}

func (a *attemptDeadline) Read(p []byte) (int, error) { return a.body.Read(p) }

func (a *attemptDeadline) Close() error {
	err := a.body.Close()
	a.cancel(nil)
	return err
}

// readBound is a bound on a body's read (boundRead).
type readBound interface {
	// stop ends the bound and reports whether it had passed (the body was then closed).
	stop() (stalled bool)
}

// boundRead bounds the read of body by d: the body is closed when d passes first. A
// body from headerDeadline re-arms its attempt's timer; any other gets one of its own.
func boundRead(body io.ReadCloser, d time.Duration) readBound {
	if a, ok := body.(*attemptDeadline); ok && a.reusable {
		a.reading.Store(true)
		a.timer.Reset(d)
		return a
	}
	b := &ownBound{}
	b.timer = time.AfterFunc(d, func() {
		b.stalled.Store(true)
		_ = body.Close()
	})
	return b
}

func (a *attemptDeadline) stop() bool {
	a.timer.Stop()
	return a.stalled.Load()
}

// ownBound bounds the read of a body that came without an attemptDeadline.
type ownBound struct {
	timer   *time.Timer
	stalled atomic.Bool
}

func (b *ownBound) stop() bool {
	b.timer.Stop()
	return b.stalled.Load()
}
