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
// timeout (rt). Once the headers are in, the same timer, set again, bounds the body
// the same way: a peer that sends headers and then stalls ends the attempt with
// errBodyDeadline as its context's cause (bodyTimedOut). One timer, one context
// and one trace an attempt.
type headerDeadline struct {
	base    http.RoundTripper
	timeout time.Duration
}

// errHeaderDeadline and errBodyDeadline are the causes of an attempt cut by
// headerDeadline before its headers, and while its body was read.
var (
	errHeaderDeadline = errors.New("header deadline")
	errBodyDeadline   = errors.New("body deadline")
)

// deadlineError reports the passed deadline; it is a net.Error timeout.
type deadlineError struct {
	what    string
	timeout time.Duration
}

func (e *deadlineError) Error() string   { return fmt.Sprintf("no %s within %s", e.what, e.timeout) }
func (e *deadlineError) Timeout() bool   { return true }
func (e *deadlineError) Temporary() bool { return true }

// attemptDeadline is one attempt's timer, context end and connection trace, in one
// allocation.
type attemptDeadline struct {
	cancel    context.CancelCauseFunc
	timer     *time.Timer
	trace     httptrace.ClientTrace
	connected atomic.Bool
	// body: the timer bounds the body now.
	body atomic.Bool
}

func (a *attemptDeadline) expire() {
	if a.body.Load() {
		a.cancel(errBodyDeadline)
	} else {
		a.cancel(errHeaderDeadline)
	}
}

func (h headerDeadline) RoundTrip(req *http.Request) (*http.Response, error) {
	a := &attemptDeadline{}
	ctx, cancel := context.WithCancelCause(req.Context())
	a.cancel = cancel
	a.trace.GotConn = func(httptrace.GotConnInfo) { a.connected.Store(true) }
	ctx = httptrace.WithClientTrace(ctx, &a.trace)
	a.timer = time.AfterFunc(h.timeout, a.expire)
	resp, err := h.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		fired := !a.timer.Stop()
		defer cancel(nil)
		if fired && errors.Is(context.Cause(ctx), errHeaderDeadline) && req.Context().Err() == nil {
			if !a.connected.Load() {
				return nil, &ConnectError{Op: "dial", Addr: req.URL.Host, Err: &deadlineError{"connection", h.timeout}}
			}
			return nil, &deadlineError{"response headers", h.timeout}
		}
		return nil, err
	}
	// The headers are in: the timer now bounds the body (a timer that fired just
	// now has ended the attempt, and the body's read says so).
	a.body.Store(true)
	if a.timer.Stop() {
		a.timer.Reset(h.timeout)
	}
	resp.Body = &deadlineBody{ReadCloser: resp.Body, a: a}
	return resp, nil
}

// deadlineBody ends the attempt's timer and context once its body is closed.
type deadlineBody struct {
	io.ReadCloser
	a *attemptDeadline
}

func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.a.timer.Stop()
	b.a.cancel(nil)
	return err
}

// bodyTimedOut reports whether resp's body was cut by its attempt's deadline.
func bodyTimedOut(resp *http.Response) bool {
	if resp.Request == nil {
		return false
	}
	cause := context.Cause(resp.Request.Context())
	return errors.Is(cause, errBodyDeadline) || errors.Is(cause, errHeaderDeadline)
}
