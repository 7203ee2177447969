package transporttest

import (
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Step is one scripted answer. The zero Step answers 200 with an empty body.
type Step struct {
	// Status is the status code; 0 means 200.
	Status int
	// Header is added to the response.
	Header http.Header
	// Body is the response body.
	Body []byte
	// BodySize, when > 0, sends that many bytes of filler instead of Body (an
	// oversized body).
	BodySize int
	// Delay holds the response headers back this long (slow headers). The wait ends
	// early when the client goes away.
	Delay time.Duration
	// Hang never answers: the handler waits until the client goes away or the server
	// closes (a request, or WebSocket upgrade, that never completes).
	Hang bool
	// ResetBeforeHeaders resets the connection (RST) instead of answering.
	ResetBeforeHeaders bool
	// CloseBeforeHeaders closes the connection (FIN) instead of answering.
	CloseBeforeHeaders bool
	// ResetAfter, when > 0, sends the headers announcing Body (or BodySize) in full,
	// then only ResetAfter bytes of it, then resets the connection.
	ResetAfter int
	// StallAfter, when > 0, sends the headers announcing Body (or BodySize) in full,
	// then only StallAfter bytes of it, then waits until the client goes away.
	StallAfter int
}

// Status is a Step answering code with an empty body.
func Status(code int) Step { return Step{Status: code} }

// Statuses is a script of plain status answers, e.g. Statuses(500, 500, 200).
func Statuses(codes ...int) []Step {
	steps := make([]Step, len(codes))
	for i, c := range codes {
		steps[i] = Status(c)
	}
	return steps
}

// JSON is a Step answering code with a JSON body.
func JSON(code int, body string) Step {
	return Step{Status: code, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

// Redirect is a Step answering code (301, 302, 307, 308...) with a Location.
func Redirect(code int, location string) Step {
	return Step{Status: code, Header: http.Header{"Location": {location}}}
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	// RemoteAddr is the client's address: equal values mean the connection was reused.
	RemoteAddr string
	RawQuery   string
	Header     http.Header
	Body       []byte
	Time       time.Time
}

// Server is a scripted HTTP server on 127.0.0.1. Paths without a script answer 200
// with an empty body. A script's last step repeats once the others are used up.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	scripts  map[string][]Step
	requests []Request
	received map[string]*count // per path
	stop     chan struct{}
	stopOnce sync.Once
}

// NewServer starts a plain HTTP Server, closed by t.Cleanup.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := newServer()
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// NewServerOn is NewServer listening on addr, a loopback address such as
// "127.0.0.1:0" or one with a fixed port.
func NewServerOn(t testing.TB, addr string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatalf("transporttest: listen %s: %v", addr, err)
	}
	s := newServer()
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	_ = s.Server.Listener.Close()
	s.Server.Listener = ln
	s.Server.Start()
	t.Cleanup(s.Close)
	return s
}

// NewTLSServer starts an HTTPS Server with httptest's self-signed certificate; a
// client trusts it only with TLSConfig.
func NewTLSServer(t testing.TB) *Server {
	t.Helper()
	s := newServer()
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Handshake failures are what tests provoke; keep them out of the test log.
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Server.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func newServer() *Server {
	return &Server{scripts: map[string][]Step{}, received: map[string]*count{}, stop: make(chan struct{})}
}

// TLSConfig returns a client TLS configuration that trusts the server's certificate.
func (s *Server) TLSConfig() *tls.Config {
	if s.Certificate() == nil {
		return nil
	}
	return s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// Close releases hanging handlers and shuts the server down. Safe to call twice.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Script sets the answers for path, replacing any earlier script.
func (s *Server) Script(path string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[path] = append([]Step(nil), steps...)
}

// Requests returns a copy of every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsTo returns the requests received for path.
func (s *Server) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Received returns a channel closed once the server has received n requests for path
// (at once when it already has), so that a test acts while a scripted answer is held
// back (Delay, Hang, StallAfter) instead of polling Requests. The request is
// recorded before its step is played.
func (s *Server) Received(path string, n int) <-chan struct{} {
	return s.countOf(path).reached(n)
}

func (s *Server) countOf(path string) *count {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.received[path]
	if !ok {
		c = &count{}
		s.received[path] = c
	}
	return c
}

func (s *Server) next(r *http.Request) Step {
	body, _ := io.ReadAll(r.Body)
	defer s.countOf(r.URL.Path).add()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, RemoteAddr: r.RemoteAddr, RawQuery: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Time: time.Now(),
	})
	steps := s.scripts[r.URL.Path]
	switch len(steps) {
	case 0:
		return Step{}
	case 1:
		return steps[0]
	default:
		s.scripts[r.URL.Path] = steps[1:]
		return steps[0]
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	step := s.next(r)
	if step.Hang {
		s.wait(r, -1)
		abort(w, false) // returning would send an implicit 200
		return
	}
	if step.Delay > 0 && !s.wait(r, step.Delay) {
		abort(w, false)
		return
	}
	if step.ResetBeforeHeaders || step.CloseBeforeHeaders {
		abort(w, step.ResetBeforeHeaders)
		return
	}
	body := step.Body
	if step.BodySize > 0 {
		body = bytes.Repeat([]byte("x"), step.BodySize)
	}
	for k, vs := range step.Header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	status := step.Status
	if status == 0 {
		status = http.StatusOK
	}
	if step.ResetAfter > 0 && step.ResetAfter < len(body) {
		w.WriteHeader(status)
		_, _ = w.Write(body[:step.ResetAfter])
		w.(http.Flusher).Flush()
		abort(w, true)
		return
	}
	if step.StallAfter > 0 && step.StallAfter < len(body) {
		w.WriteHeader(status)
		_, _ = w.Write(body[:step.StallAfter])
		w.(http.Flusher).Flush()
		s.wait(r, -1)
		abort(w, false)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// wait blocks for d (forever when d < 0) and reports whether it ran to the end
// rather than the client going away or the server closing.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-r.Context().Done():
	case <-s.stop:
	}
	return false
}

// abort takes the connection over and closes it, with a reset (SO_LINGER 0) when
// reset is true.
func abort(w http.ResponseWriter, reset bool) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	if tlsConn, ok := conn.(*tls.Conn); ok && reset {
		if tc, ok := tlsConn.NetConn().(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	_ = conn.Close()
}
