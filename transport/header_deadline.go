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
// timeout (rt). The body is not bounded here: its context lives until it is closed.
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
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	ctx = httptrace.WithClientTrace(ctx, trace)
	timer := time.AfterFunc(h.timeout, func() { cancel(errHeaderDeadline) })
	resp, err := h.base.RoundTrip(req.WithContext(ctx))
	fired := !timer.Stop()
	if err != nil {
		defer cancel(nil)
		if fired && errors.Is(context.Cause(ctx), errHeaderDeadline) && req.Context().Err() == nil {
			if !connected.Load() {
				return nil, &ConnectError{Op: "dial", Addr: req.URL.Host, Err: &deadlineError{"connection", h.timeout}}
			}
			return nil, &deadlineError{"response headers", h.timeout}
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { cancel(nil) }}
	return resp, nil
}

// cancelOnClose ends the request's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
