package wsclient

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// deadlineSpy is the client's socket, telling when a read deadline in the past (an
// interrupt) was lifted or put off again: the interrupted read has been dealt with.
type deadlineSpy struct {
	net.Conn
	mu     sync.Mutex
	past   bool
	lifted chan struct{} // one value a lift after a past deadline
	// reading, when set, is told of the next Read on the socket; timeouts counts the
	// Reads that met a deadline after it.
	reading  chan struct{}
	watching bool
	timeouts int
	// entries, when set, gets a value at every Read on the socket.
	entries chan struct{}
}

func (c *deadlineSpy) Read(b []byte) (int, error) {
	c.mu.Lock()
	tell := c.reading
	c.reading = nil
	entries := c.entries
	c.mu.Unlock()
	if tell != nil {
		close(tell)
	}
	if entries != nil {
		entries <- struct{}{}
	}
	n, err := c.Conn.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.mu.Lock()
		if c.watching {
			c.timeouts++
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *deadlineSpy) SetReadDeadline(t time.Time) error {
	err := c.Conn.SetReadDeadline(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !t.IsZero() && t.Before(time.Now()):
		c.past = true
	case c.past: // lifted, or put off (a frame cut in the middle)
		c.past = false
		select {
		case c.lifted <- struct{}{}:
		default:
		}
	}
	return err
}

// NetConn is the socket, as tls.Conn's.
func (c *deadlineSpy) NetConn() net.Conn { return c.Conn }

// spiedClient is loopbackClient whose connections are deadlineSpies, sent on conns.
func spiedClient(t *testing.T, conns chan<- *deadlineSpy) *http.Client {
	t.Helper()
	c := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{
		DisableKeepAlives: true,
		Connect: func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			nc, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			spy := &deadlineSpy{Conn: nc, lifted: make(chan struct{}, 1)}
			conns <- spy
			return spy, nil
		},
	})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestConnReadCutInsideControlFrame: a wait cut short while a ping is half received
// (the rest of it on its way) reads the ping to its end and answers it, then ends:
// a ping is no message to return, so the cut must still count at the next frame
// boundary, not wait for whatever data message comes next (for an idle application,
// never).
func TestConnReadCutInsideControlFrame(t *testing.T) {
	t.Parallel()
	pong := make(chan []byte, 2)
	more := make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		// A whole ping, and the first byte of the next one's payload.
		rw.Write([]byte{0x80 | opPing, 2, 'p', '1', 0x80 | opPing, 4, 'a'})
		if rw.Flush() != nil {
			return
		}
		pong <- readClientFrame(rw)
		select {
		case <-more:
		case <-time.After(30 * time.Second):
			return
		}
		rw.WriteString("bcd")
		if rw.Flush() != nil {
			return
		}
		pong <- readClientFrame(rw)
		// A message the cut Read must not wait for (it returns it if it did).
		if writeFrame(rw, true, opText, []byte("late")) != nil {
			return
		}
		answerClose(rw)
	})
	conns := make(chan *deadlineSpy, 1)
	conn := dialServer(t, s.URL, func(o *Options) { o.HTTPClient = spiedClient(t, conns) })
	spy := <-conns
	ctx, cancel := context.WithCancel(context.Background())
	read := make(chan readResult, 1)
	go func() {
		b, err := conn.Read(ctx)
		read <- readResult{b, err}
	}()
	if got := <-pong; len(got) < 3 || string(got[1:]) != "p1" {
		t.Fatalf("the first ping's answer: %x", got)
	}
	cancel()
	<-spy.lifted // the interrupt was dealt with (the ping half read, or between frames)
	close(more)
	got := <-read
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Read cut short inside a ping: %q, %v; want context.Canceled", got.b, got.err)
	}
	if b, err := readCtx(t, conn); err != nil || string(b) != "late" {
		t.Errorf("after the cut: %q, %v", b, err)
	}
}

// answerClose reads the client's frames until its close frame, and answers it.
func answerClose(rw *bufio.ReadWriter) {
	for {
		f := readClientFrame(rw)
		if len(f) == 0 {
			return
		}
		if f[0]&0x0f == opClose {
			writeFrame(rw, true, opClose, f[1:])
			return
		}
	}
}

// TestConnReadEndedContextTakesWhatCame: a Read whose context has already ended
// (wssession's Poll between two verbs: "what the application sent meanwhile")
// returns a message that has come, read ahead with the one before it or waiting in
// the socket, and ctx's error only when nothing has; the connection stays whole.
func TestConnReadEndedContextTakesWhatCame(t *testing.T) {
	t.Parallel()
	next, last := make(chan struct{}), make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		// Two messages in one write: the first Read reads both off the socket.
		rw.Write([]byte{0x81, 2, 'm', '1', 0x81, 2, 'm', '2'})
		if rw.Flush() != nil {
			return
		}
		for i, ch := range []chan struct{}{next, last} {
			select {
			case <-ch:
			case <-time.After(30 * time.Second):
				return
			}
			if writeFrame(rw, true, opText, []byte{'m', byte('3' + i)}) != nil {
				return
			}
		}
		answerClose(rw)
	})
	conns := make(chan *deadlineSpy, 1)
	conn := dialServer(t, s.URL, func(o *Options) { o.HTTPClient = spiedClient(t, conns) })
	spy := <-conns
	if b, err := readCtx(t, conn); err != nil || string(b) != "m1" {
		t.Fatalf("first message: %q, %v", b, err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if b, err := conn.Read(ended); err != nil || string(b) != "m2" {
		t.Errorf("read ahead, ended context: %q, %v; want m2", b, err)
	}
	close(next)
	waitReadable(t, spy.Conn)
	if b, err := conn.Read(ended); err != nil || string(b) != "m3" {
		t.Errorf("waiting in the socket, ended context: %q, %v; want m3", b, err)
	}
	if b, err := conn.Read(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("nothing come, ended context: %q, %v; want context.Canceled", b, err)
	}
	close(last)
	if b, err := readCtx(t, conn); err != nil || string(b) != "m4" {
		t.Errorf("then: %q, %v; want m4", b, err)
	}
}

// waitReadable waits until bytes wait to be read on nc, without reading them.
func waitReadable(t *testing.T, nc net.Conn) {
	t.Helper()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		t.Fatalf("%T is no syscall.Conn", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN
	})
	if err != nil {
		t.Fatal(err)
	}
}

// splitListener hands out splitConns.
type splitListener struct {
	net.Listener
	conns chan *splitConn
}

func (l *splitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &splitConn{Conn: c}
	select {
	case l.conns <- sc:
	default:
	}
	return sc, nil
}

// splitConn is a server's socket that, once told to, sends the first 5 bytes of
// its next write (a TLS record's header) and holds the rest until released.
type splitConn struct {
	net.Conn
	mu    sync.Mutex
	split bool
	held  []byte
}

func (c *splitConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	split := c.split
	c.split = false
	c.mu.Unlock()
	if !split || len(b) <= 5 {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(b[:5]); err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.held = append([]byte(nil), b[5:]...)
	c.mu.Unlock()
	return len(b), nil
}

func (c *splitConn) release() error {
	c.mu.Lock()
	b := c.held
	c.held = nil
	c.mu.Unlock()
	_, err := c.Conn.Write(b)
	return err
}

// TestConnReadEndedContextPartTLSRecord: over wss, a Read whose context had ended
// (a poll) while part of a TLS record waits in the socket does not wait for the
// rest of it: tls.Conn reads whole records, so bytes in the socket do not say that
// a message can be read without waiting. (tls.Conn would likewise wait on after a
// record that carries no data, a session ticket.)
func TestConnReadEndedContextPartTLSRecord(t *testing.T) {
	t.Parallel()
	write, written := make(chan struct{}), make(chan struct{})
	var scripts sync.WaitGroup
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Sec-WebSocket-Key")
		serveHijacked(w, &scripts, func(conn net.Conn, rw *bufio.ReadWriter) {
			sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Protocol: " + Subprotocol + "\r\n" +
				"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
			if rw.Flush() != nil {
				return
			}
			select {
			case <-write:
			case <-time.After(30 * time.Second):
				return
			}
			if writeFrame(rw, true, opText, []byte("m")) != nil {
				return
			}
			close(written)
			answerClose(rw)
		})
	}))
	split := &splitListener{Listener: s.Listener, conns: make(chan *splitConn, 1)}
	s.Listener = split
	s.StartTLS()
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
		scripts.Wait()
	})
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	conns := make(chan *deadlineSpy, 1)
	client := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{
		DisableKeepAlives: true,
		TLSConfig:         &tls.Config{RootCAs: pool},
		Connect: func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			nc, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			spy := &deadlineSpy{Conn: nc, lifted: make(chan struct{}, 1)}
			conns <- spy
			return spy, nil
		},
	})
	t.Cleanup(client.CloseIdleConnections)
	opts := testOptions(t, &testkit.SleepRecorder{})
	opts.HTTPClient = client
	conn, err := Dial(context.Background(), mustTarget(t, "wss"+strings.TrimPrefix(s.URL, "https")+"#rc=0"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(1000, "test over") })
	spy, server := <-conns, <-split.conns
	server.mu.Lock()
	server.split = true
	server.mu.Unlock()
	close(write)
	<-written
	waitReadable(t, spy.Conn) // the record's header
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	read := make(chan readResult, 1)
	go func() {
		b, err := conn.Read(ended)
		read <- readResult{b, err}
	}()
	<-spy.lifted // the poll is over, or reads without a deadline
	if err := server.release(); err != nil {
		t.Fatal(err)
	}
	if got := <-read; !errors.Is(got.err, context.Canceled) {
		t.Errorf("poll with part of a record come: %q, %v; want context.Canceled", got.b, got.err)
	}
	if b, err := readCtx(t, conn); err != nil || string(b) != "m" {
		t.Errorf("then: %q, %v; want m", b, err)
	}
}

// TestConnCloseWithPollMeanwhile: a Read that begins while Close waits for the
// peer's close frame (a poll, or a wait cut short) leaves the close handshake
// alone: its interrupt put a read deadline in the past under Close's own reading,
// which then met empty frames of ours over and over (a busy loop) and never read the
// peer's close until coder/websocket's 5 s were up, and Close failed.
func TestConnCloseWithPollMeanwhile(t *testing.T) {
	t.Parallel()
	gotClose, answer := make(chan []byte, 1), make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		f := readClientFrame(rw)
		gotClose <- f
		select {
		case <-answer:
		case <-time.After(30 * time.Second):
			return
		}
		if len(f) > 0 {
			writeFrame(rw, true, opClose, f[1:])
		}
		readClientFrame(rw) // until the client goes
	})
	conns := make(chan *deadlineSpy, 1)
	conn := dialServer(t, s.URL, func(o *Options) { o.HTTPClient = spiedClient(t, conns) })
	spy := <-conns
	reading := make(chan struct{})
	spy.mu.Lock()
	spy.reading, spy.watching = reading, true
	spy.mu.Unlock()
	closed := make(chan error, 1)
	go func() { closed <- conn.Close(1000, "bye") }()
	if f := <-gotClose; len(f) == 0 || f[0]&0x0f != opClose {
		t.Fatalf("the client's close frame: %x", f)
	}
	<-reading // Close waits for the peer's close frame
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := conn.Read(ended); !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
		t.Errorf("Read while closing: %v, want ErrClosed or context.Canceled", err)
	}
	close(answer)
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if spy.timeouts > 0 {
		t.Errorf("Close's reading met a read deadline %d times (the Read's interrupt)", spy.timeouts)
	}
}

// TestConnReadCutInsideStalledFrame: a wait cut short in the middle of a frame whose
// peer then stalls does not hold the caller for good: once cutFrameGrace has passed
// the connection ends as a drop. Not parallel: it shortens cutFrameGrace.
func TestConnReadCutInsideStalledFrame(t *testing.T) {
	defer func(d time.Duration) { cutFrameGrace = d }(cutFrameGrace)
	cutFrameGrace = 10 * time.Millisecond
	pong := make(chan []byte, 1)
	release := make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		// A ping, and half of a text message's only frame: then nothing.
		rw.Write([]byte{0x80 | opPing, 1, 'p', 0x81, 10, 'h', 'e', 'l', 'l', 'o'})
		if rw.Flush() != nil {
			return
		}
		pong <- readClientFrame(rw)
		select {
		case <-release:
		case <-time.After(30 * time.Second):
			// The rest, so that a Read that waits for it returns (and the test fails).
			rw.WriteString("world")
			rw.Flush()
		}
		answerClose(rw)
	})
	defer close(release)
	conn := dialServer(t, s.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	read := make(chan readResult, 1)
	go func() {
		b, err := conn.Read(ctx)
		read <- readResult{b, err}
	}()
	<-pong // the ping was handled, the half frame read with it
	cancel()
	got := <-read
	if errors.Is(got.err, context.Canceled) {
		t.Skip("the half frame came after the cut: nothing to test")
	}
	if !errors.Is(got.err, ErrDropped) {
		t.Fatalf("Read cut inside a stalled frame: %q, %v; want ErrDropped", got.b, got.err)
	}
}

// TestConnPingedReadEndedContextTakesWhatCame: with keepalive pings (a reader
// goroutine), a Read whose context has ended already returns a message the reader
// has queued, as without pings: it chose between the two at random.
func TestConnPingedReadEndedContextTakesWhatCame(t *testing.T) {
	t.Parallel()
	const n = 20
	send, stop := make(chan struct{}), make(chan struct{})
	defer close(stop)
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		for i := range n {
			select {
			case <-send:
			case <-stop:
				return
			}
			if writeFrame(rw, true, opText, []byte{'m', byte('a' + i)}) != nil {
				return
			}
		}
		answerClose(rw)
	})
	entries := make(chan struct{}, 1000)
	client := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{
		DisableKeepAlives: true,
		Connect: func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			nc, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			return &deadlineSpy{Conn: nc, lifted: make(chan struct{}, 1), entries: entries}, nil
		},
	})
	t.Cleanup(client.CloseIdleConnections)
	conn := dialServer(t, s.URL, func(o *Options) {
		o.HTTPClient = client
		o.PingInterval = time.Hour // a reader goroutine, and no ping meanwhile
	})
	// Reads on the socket: the opening handshake's answer, then the reader's first.
	<-entries
	<-entries
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range n {
		send <- struct{}{}
		// The reader reads again once the message is queued.
		<-entries
		want := string([]byte{'m', byte('a' + i)})
		if b, err := conn.Read(ended); err != nil || string(b) != want {
			t.Fatalf("message %d, ended context: %q, %v; want %s", i, b, err, want)
		}
	}
	if len(entries) > 0 {
		t.Errorf("%d more Reads on the socket than counted", len(entries))
	}
}
