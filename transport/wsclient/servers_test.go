package wsclient

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// Loopback test servers. Every one counts the connections or requests it saw, so a
// test can check the number of attempts from the server's side too.

// wsServer accepts WebSocket upgrades with coder/websocket (subprotocol
// ws.jambonz.org unless noSubprotocol) and runs handle on each connection.
type wsServer struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	headers  []http.Header
}

func newWSServer(t testing.TB, noSubprotocol bool, handle func(ctx context.Context, c *websocket.Conn)) *wsServer {
	t.Helper()
	return newWSServerOpts(t, opts(noSubprotocol), handle)
}

func opts(noSubprotocol bool) *websocket.AcceptOptions {
	if noSubprotocol {
		return nil
	}
	return &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}}
}

// newAcceptingServer accepts with opts and reads, answering pings and discarding
// messages, until the connection ends. (Not CloseRead: coder/websocket's CloseRead
// goroutine waits 15 s for itself when a data message arrives.)
func newAcceptingServer(t *testing.T, opts *websocket.AcceptOptions) *wsServer {
	return newWSServerOpts(t, opts, func(ctx context.Context, c *websocket.Conn) {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	})
}

func newWSServerOpts(t testing.TB, opts *websocket.AcceptOptions, handle func(ctx context.Context, c *websocket.Conn)) *wsServer {
	t.Helper()
	return newWSServerOn(t, nil, opts, handle)
}

// newWSServerOn is newWSServerOpts on an in-memory network when pipes is not nil, for
// tests in a testing/synctest bubble (the client dials with pipeClient(pipes)).
func newWSServerOn(t testing.TB, pipes *transporttest.Pipes, opts *websocket.AcceptOptions, handle func(ctx context.Context, c *websocket.Conn)) *wsServer {
	t.Helper()
	s := &wsServer{}
	var (
		handlers sync.WaitGroup
		closing  bool // under s.mu: no handler may join once cleanup waits
	)
	// Hijacked connections outlive r.Context(): handlers get one ended at cleanup.
	life, endLife := context.WithCancel(context.Background())
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		if closing {
			s.mu.Unlock()
			http.Error(w, "closing", http.StatusServiceUnavailable)
			return
		}
		// Counted before Accept hijacks the connection (httptest's Close does not
		// wait for hijacked ones), and under s.mu so that no Add races the Wait below.
		handlers.Add(1)
		s.mu.Unlock()
		defer handlers.Done()
		c, err := websocket.Accept(w, r, opts)
		if err != nil {
			return
		}
		defer c.CloseNow()
		handle(life, c)
	}))
	if pipes != nil {
		_ = s.Server.Listener.Close()
		s.Server.Listener = pipes
	}
	s.Server.Start()
	t.Cleanup(func() {
		endLife()
		s.mu.Lock()
		closing = true
		s.mu.Unlock()
		s.CloseClientConnections()
		s.Close()
		handlers.Wait()
	})
	return s
}

func (s *wsServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[i]
}

// upgradeAndDrain upgrades r to a WebSocket on Subprotocol and reads (discarding)
// until the connection fails or ctx ends.
func upgradeAndDrain(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return
	}
	defer c.CloseNow()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
	}
}

// statusServer answers the first failures upgrade requests with status (all of them
// when failures < 0) and upgrades the later ones. location, if set, is sent as the
// Location header (for 3xx).
type statusServer struct {
	*httptest.Server
	requests atomic.Int64
}

func newStatusServer(t *testing.T, status int, failures int64, location string) *statusServer {
	t.Helper()
	s := &statusServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := s.requests.Add(1); failures >= 0 && n > failures {
			upgradeAndDrain(context.Background(), w, r)
			return
		}
		if location != "" {
			w.Header().Set("Location", location)
		}
		http.Error(w, "no", status)
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// newSilentListener accepts TCP connections and never answers: every opening
// handshake against it times out. url is its ws:// URL; accepted(n) waits (10 s at
// most) until it has accepted n connections, then returns how many it has: accepts
// lag behind the client, which may give up first.
func newSilentListener(t *testing.T) (s *transporttest.Silent, url string, accepted func(n int64) int64) {
	t.Helper()
	s = transporttest.NewSilent(t)
	return s, "ws://" + s.Addr + "/ws", func(n int64) int64 {
		select {
		case <-s.Connected(int(n)):
		case <-time.After(10 * time.Second):
		}
		return int64(s.Accepted())
	}
}

// pipeClient is an HTTP client that dials the in-memory network pipes, for a test in
// a testing/synctest bubble.
func pipeClient(t testing.TB, pipes *transporttest.Pipes) *http.Client {
	tr := &http.Transport{DialContext: pipes.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// loaded counts what an HTTP server saw: its handlers count a request before they
// answer, so the count is complete once the client has its answer.
func loaded(n *atomic.Int64) func(int64) int64 { return func(int64) int64 { return n.Load() } }

// closedPortURL is a loopback address nothing listens on: connects are refused.
func closedPortURL(t *testing.T) string {
	t.Helper()
	return "ws://" + transporttest.ClosedAddr(t) + "/ws"
}

// rawServer completes the opening handshake by hand (selecting ws.jambonz.org) and
// hands the hijacked socket to script, which writes frames byte by byte. It never
// reads after the handshake unless script does.
func newRawServer(t testing.TB, script func(r *http.Request, conn net.Conn, rw *bufio.ReadWriter)) *httptest.Server {
	t.Helper()
	var scripts sync.WaitGroup
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Sec-WebSocket-Key")
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
			http.Error(w, "not an upgrade", http.StatusBadRequest)
			return
		}
		serveHijacked(w, &scripts, func(conn net.Conn, rw *bufio.ReadWriter) {
			sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Protocol: " + Subprotocol + "\r\n" +
				"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
			if rw.Flush() != nil {
				return
			}
			script(r, conn, rw)
		})
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
		scripts.Wait()
	})
	return s
}

// serveHijacked takes w's connection over and runs serve on it, counted in held
// until serve has returned and the connection is closed: a cleanup that waits on
// held knows that no handler still writes.
func serveHijacked(w http.ResponseWriter, held *sync.WaitGroup, serve func(conn net.Conn, rw *bufio.ReadWriter)) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	held.Add(1)
	defer held.Done()
	defer conn.Close()
	serve(conn, rw)
}

// newBogusUpgradeServer answers every request with a 101 whose Sec-WebSocket-Accept
// is wrong: an upgrade the client must refuse.
func newBogusUpgradeServer(t testing.TB) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Protocol: " + Subprotocol + "\r\nSec-WebSocket-Accept: bogus\r\n\r\n")
		rw.Flush()
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s, &requests
}

// WebSocket opcodes for raw frames.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
)

// writeFrame writes one unmasked (server to client) frame.
func writeFrame(w *bufio.ReadWriter, fin bool, opcode byte, payload []byte) error {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	hdr := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, byte(n))
	case n <= 0xFFFF:
		hdr = append(hdr, 126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, 127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	return w.Flush()
}

// loopbackClient is the egress client with loopback allowed, as a node configured
// for local applications uses.
func loopbackClient(t testing.TB) *http.Client {
	t.Helper()
	c := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// policyServer is a loopback server of the dial and reconnect policy tables, with the
// failure class an attempt on it ends in.
type policyServer struct {
	// url starts the server; the function it returns counts what the server saw,
	// once it has seen the number given (or it never will).
	url   func(t *testing.T) (string, func(want int64) int64)
	class retry.Class
}

// start starts the server, and the options of an attempt on it: waits recorded by
// rec, and the short handshake timeout where the server never answers.
func (s policyServer) start(t *testing.T) (url string, seen func(want int64) int64, rec *testkit.SleepRecorder, opts Options) {
	url, seen = s.url(t)
	rec = &testkit.SleepRecorder{}
	opts = testOptions(t, rec)
	if s.class == retry.HandshakeTimeout {
		opts.HandshakeTimeout = shortHandshake
	}
	return url, seen, rec, opts
}

// silentPolicyServer accepts connections and never answers the handshake.
func silentPolicyServer() policyServer {
	return policyServer{func(t *testing.T) (string, func(int64) int64) {
		_, url, accepted := newSilentListener(t)
		return url, accepted
	}, retry.HandshakeTimeout}
}

// refusedPolicyServer is a closed port: the server sees nothing.
func refusedPolicyServer() policyServer {
	return policyServer{func(t *testing.T) (string, func(int64) int64) {
		return closedPortURL(t), func(int64) int64 { return -1 }
	}, retry.Connect}
}

// statusPolicyServer answers every handshake with code; its URL ends in path.
func statusPolicyServer(code int, path string) policyServer {
	return policyServer{func(t *testing.T) (string, func(int64) int64) {
		s := newStatusServer(t, code, -1, "")
		return "ws" + strings.TrimPrefix(s.URL, "http") + path, loaded(&s.requests)
	}, retry.ClassifyStatus(code)}
}

// testOptions: loopback allowed, waits recorded, a handshake timeout generous
// enough for a loaded machine. Tests of handshake timeouts shorten it.
func testOptions(t testing.TB, rec *testkit.SleepRecorder) Options {
	return Options{
		HTTPClient:       loopbackClient(t),
		HandshakeTimeout: 5 * time.Second,
		Sleep:            rec.Sleep,
	}
}

// shortHandshake is the handshake timeout of tests that expect it to expire.
const shortHandshake = 100 * time.Millisecond

func mustTarget(t testing.TB, raw string) fragment.Target {
	t.Helper()
	tg, err := fragment.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func seconds(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}
