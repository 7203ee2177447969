package transporttest

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// ClosedAddr returns "127.0.0.1:port" for a port nobody listens on: connecting to it
// is refused. The port was bound and released, so it is unlikely to be reused during
// the test.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("transporttest: listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("transporttest: close: %v", err)
	}
	return addr
}

// Silent is a TCP listener that accepts connections and never answers: the client
// connects, sends, and waits. It counts what it accepted, so a test can prove that a
// connection did (or did not) arrive.
type Silent struct {
	// Addr is "127.0.0.1:port".
	Addr     string
	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
	done     chan struct{}
}

// NewSilent starts a Silent listener, closed (with its connections) by t.Cleanup.
func NewSilent(t testing.TB) *Silent {
	t.Helper()
	return newSilentOn(t, "127.0.0.1:0")
}

// NewSilentOn is NewSilent on a given loopback address such as "127.0.0.2:0" (Linux
// routes all of 127/8 to loopback), for tests that need two distinct addresses.
func NewSilentOn(t testing.TB, addr string) *Silent {
	t.Helper()
	return newSilentOn(t, addr)
}

func newSilentOn(t testing.TB, addr string) *Silent {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatalf("transporttest: listen %s: %v", addr, err)
	}
	s := &Silent{Addr: ln.Addr().String(), ln: ln, done: make(chan struct{})}
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

func (s *Silent) serve() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
}

// Accepted is the number of connections accepted so far.
func (s *Silent) Accepted() int { return int(s.accepted.Load()) }

// Close stops the listener and closes every accepted connection. Safe to call twice.
func (s *Silent) Close() {
	_ = s.ln.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// Unaccepting is a listening socket with a zero backlog that never accepts. Once its
// queue is full (Fill), the kernel drops further SYNs, so a connect to Addr times out
// — a real TCP connect timeout on loopback.
type Unaccepting struct {
	// Addr is "127.0.0.1:port".
	Addr   string
	fd     int
	fill   []net.Conn
	closed bool
}

// NewUnaccepting opens the listener and fills its queue; closed by t.Cleanup.
func NewUnaccepting(t testing.TB) *Unaccepting {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("transporttest: socket: %v", err)
	}
	u := &Unaccepting{fd: fd}
	t.Cleanup(u.Close)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("transporttest: bind: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatalf("transporttest: listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("transporttest: getsockname: %v", err)
	}
	in4 := sa.(*syscall.SockaddrInet4)
	u.Addr = (&net.TCPAddr{IP: net.IP(in4.Addr[:]), Port: in4.Port}).String()
	u.fillQueue(t)
	return u
}

// fillQueue connects until a connect does not complete at once: from then on the
// accept queue is full and SYNs are dropped.
func (u *Unaccepting) fillQueue(t testing.TB) {
	for range 8 {
		c, err := net.DialTimeout("tcp4", u.Addr, fillProbeTimeout)
		if err != nil {
			return
		}
		u.fill = append(u.fill, c)
	}
	t.Fatalf("transporttest: the accept queue of %s never filled", u.Addr)
}

// Close closes the listening socket and the connections that filled its queue.
func (u *Unaccepting) Close() {
	if u.closed {
		return
	}
	u.closed = true
	for _, c := range u.fill {
		_ = c.Close()
	}
	_ = syscall.Close(u.fd)
}
