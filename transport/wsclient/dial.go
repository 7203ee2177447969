package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Attempt is one opening handshake, as reported to Options.Observer and kept in
// DialError.Attempts: Status is the HTTP status of the upgrade answer (101 on
// success), 0 if none; Number counts from 1 within one Dial or one reconnect episode.
type Attempt = transport.Attempt

// DialError is returned by Dial and Reconnector.Next when no connection could be
// opened. It wraps the last attempt's error.
type DialError struct {
	// Class is the class of the last attempt (retry.Canceled when ctx ended first).
	Class retry.Class
	// Status is the HTTP status of the last upgrade answer, 0 if none.
	Status int
	// Attempts lists every attempt made, in order.
	Attempts []Attempt
	// Err is the cause.
	Err error
}

// Error names the attempts, the class, the status and the cause.
func (e *DialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wsclient: dial failed after %d attempt(s)", len(e.Attempts))
	if e.Class != "" {
		fmt.Fprintf(&b, " (%s", e.Class)
		if e.Status != 0 {
			fmt.Fprintf(&b, ", status %d", e.Status)
		}
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *DialError) Unwrap() error { return e.Err }

// Dial opens the WebSocket of an application (a ws or wss Target from
// fragment.Parse or fragment.Resolve) with the subprotocol ws.jambonz.org, retrying
// per the target's policy (docs/call-control.md §1–2): rc+1 attempts at most, the ramp
// 0.5, 1, 2, 4, 6 s between them, only the classes rp covers. A handshake timeout is
// retried only when rp is explicit and has ct or all; an egress refusal never.
//
// On failure it returns a *DialError listing the attempts. When ctx ends, Dial stops
// at once and the DialError wraps ctx.Err(). Options out of range give an error
// wrapping ErrInvalidOptions and no attempt is made.
func Dial(ctx context.Context, target fragment.Target, opts Options) (*Conn, error) {
	o, own, err := opts.prepared()
	if err != nil {
		return nil, err
	}
	if own {
		defer o.HTTPClient.CloseIdleConnections()
	}
	return dialWithRetries(ctx, target, o, retry.CallControl(target.Policy), 0)
}

// dialWithRetries runs attempts under policy p; the first waits firstDelay. o has its
// defaults.
func dialWithRetries(ctx context.Context, target fragment.Target, o Options, p retry.Policy, firstDelay time.Duration) (*Conn, error) {
	if err := checkTarget(target); err != nil {
		return nil, &DialError{Class: retry.Permanent, Err: err}
	}
	var attempts []Attempt
	delay := firstDelay
	for n := 1; ; n++ {
		if delay > 0 {
			if err := o.Sleep(ctx, delay); err != nil {
				return nil, giveUp(o, target, attempts, retry.Canceled, 0, fmt.Errorf("waiting to retry: %w", err))
			}
		}
		start := o.Clock.Now()
		conn, status, err := dialOnce(ctx, target, o)
		a := Attempt{Number: n, Start: start, Duration: o.Clock.Now().Sub(start), Status: status, Err: err, DelayBefore: delay}
		a.Class = classifyAttempt(ctx, o, status, err)
		attempts = append(attempts, a)
		if o.Observer != nil {
			o.Observer(a)
		}
		if err == nil {
			o.Logger.Debug().Str("url", target.Clean()).Int("attempt", n).Msg("websocket connected")
			return conn, nil
		}
		o.Logger.Debug().Str("url", target.Clean()).Int("attempt", n).Str("class", string(a.Class)).
			Int("status", status).Err(err).Msg("websocket attempt failed")
		if a.Class == retry.Canceled {
			return nil, giveUp(o, target, attempts, a.Class, status, err)
		}
		d := retry.NextAttempt(p, retry.Outcome{Class: a.Class}, n)
		if !d.Retry {
			return nil, giveUp(o, target, attempts, a.Class, status, fmt.Errorf("%s: %w", d.Reason, err))
		}
		delay = d.Delay
	}
}

func giveUp(o Options, target fragment.Target, attempts []Attempt, c retry.Class, status int, err error) *DialError {
	o.Logger.Warn().Str("url", target.Clean()).Int("attempts", len(attempts)).Str("class", string(c)).
		Err(err).Msg("websocket connection failed")
	return &DialError{Class: c, Status: status, Attempts: attempts, Err: err}
}

func checkTarget(t fragment.Target) error {
	if t.URL == nil {
		return fmt.Errorf("%w: target has no URL", fragment.ErrInvalidURL)
	}
	if tr, err := fragment.TransportOf(t.URL.Scheme); err != nil || tr != fragment.WebSocket {
		return fmt.Errorf("%w: %q is not a ws or wss URL", fragment.ErrInvalidURL, t.Clean())
	}
	return nil
}

// dialOnce makes one opening handshake bounded by o.HandshakeTimeout. status is the
// HTTP status of the answer, 0 if none came.
func dialOnce(ctx context.Context, target fragment.Target, o Options) (*Conn, int, error) {
	hctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer cancel()
	header := o.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Set("User-Agent", o.UserAgent)
	// After a failed handshake (a 101 that does not verify, say) coder/websocket reads
	// the answer's body for up to 3 s, whatever the context: closing the connection
	// when the handshake's time is up keeps the attempt within it.
	var (
		connMu sync.Mutex
		conn   net.Conn
	)
	hctx = httptrace.WithClientTrace(hctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		connMu.Lock()
		conn = info.Conn
		connMu.Unlock()
	}})
	closeAtDeadline := context.AfterFunc(hctx, func() {
		connMu.Lock()
		defer connMu.Unlock()
		if conn != nil {
			_ = conn.Close()
		}
	})
	pongs := new(atomic.Int64)
	client := o.HTTPClient
	var hook *upgradeHook
	if o.PingInterval == 0 {
		// Read reads on the caller's goroutine: the upgraded connection is read
		// through a frameReader (inline.go).
		base := client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hook = &upgradeHook{base: base}
		hc := *client
		hc.Transport = hook
		client = &hc
	}
	ws, resp, err := websocket.Dial(hctx, target.Clean(), &websocket.DialOptions{
		HTTPClient:     client,
		HTTPHeader:     header,
		Subprotocols:   []string{Subprotocol},
		OnPongReceived: func(context.Context, []byte) { pongs.Add(1) },
	})
	if err != nil {
		// The upgrade failed: its connection, if the client kept it alive, must not
		// carry another attempt or another call's upgrade (docs/call-control.md §4).
		connMu.Lock()
		if conn != nil {
			_ = conn.Close()
		}
		connMu.Unlock()
	}
	if !closeAtDeadline() && err == nil {
		// The time was up as the handshake completed: its connection is closed.
		_ = ws.CloseNow()
		err = hctx.Err()
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	if err != nil {
		if resp == nil && ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
			// No answer in time. Name the real cause: what the dial reports is "context
			// deadline exceeded", or the connection closed above.
			err = fmt.Errorf("opening handshake not completed within %v: %w", o.HandshakeTimeout, context.DeadlineExceeded)
		}
		return nil, status, err
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.CloseNow()
		return nil, status, fmt.Errorf("%w (got %q)", ErrSubprotocol, ws.Subprotocol())
	}
	var fr *frameReader
	if hook != nil && hook.fr != nil {
		connMu.Lock()
		if conn != nil {
			fr, hook.fr.nc = hook.fr, conn
		}
		connMu.Unlock()
	}
	return newConn(ws, o, pongs, fr), status, nil
}
