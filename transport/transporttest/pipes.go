package transporttest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Pipes is an in-memory network of one listener, for tests run in a testing/synctest
// bubble. A goroutine waiting on a real socket does not count as blocked there, so the
// bubble's clock would not move while a client waits for a slow loopback answer; one
// waiting on a net.Pipe does, and a timeout of 150 ms then fires exactly when nothing
// else can happen, however loaded the machine. Dial connects to the listener
// whatever the address. Both ends must be made inside the bubble.
type Pipes struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewPipes returns an open Pipes network.
func NewPipes() *Pipes {
	return &Pipes{conns: make(chan net.Conn), done: make(chan struct{})}
}

// DialContext connects to the listener: it waits until Accept takes the connection,
// and fails when ctx ends first or the listener is closed (as a refused connection).
// Its signature is net.Dialer.DialContext's.
func (p *Pipes) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.done:
		return nil, errPipesClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errPipesClosed = &net.OpError{Op: "dial", Net: "pipe", Err: errors.New("connection refused: pipe listener closed")}

// Accept waits for the next connection; after Close it returns net.ErrClosed.
func (p *Pipes) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections already made stay open. Safe to call twice.
func (p *Pipes) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// Addr is a placeholder loopback address: it only makes URLs, nothing dials it.
func (p *Pipes) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// NewPipeServer starts a scripted Server on a Pipes network, for tests in a
// testing/synctest bubble (call it inside the bubble); a client reaches it through the
// returned Pipes' DialContext, at Server.URL. Steps that rely on TCP (ResetAfter and
// ResetBeforeHeaders, which reset the connection) close the pipe instead. The server
// is closed by t.Cleanup.
func NewPipeServer(t testing.TB) (*Server, *Pipes) {
	t.Helper()
	p := NewPipes()
	s := newServer()
	s.Server = &httptest.Server{Listener: p, Config: &http.Server{Handler: http.HandlerFunc(s.serve)}}
	s.Server.Start()
	t.Cleanup(s.Close)
	return s, p
}
