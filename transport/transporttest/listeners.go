package transporttest

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// ClosedAddr returns "127.0.0.1:port" for a port nobody listens on: connecting to it
// is refused. The port is bound without listening and stays bound until the test ends,
// so no other socket can take it meanwhile.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	fd, port := bindUnlistened(t, [4]byte{127, 0, 0, 1}, false)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// SharedPort returns a TCP port that is free on every IPv4 address and held for the
// test, for a test that listens on one port at two loopback addresses (NewServerOn
// "127.0.0.1:"+port and NewSilentOn "127.0.0.2:"+port): a port taken from one
// address's listener may be in use at the other. It is held by a socket bound to
// 0.0.0.0 with SO_REUSEADDR that never listens: listeners on the port at specific
// addresses (net.Listen sets SO_REUSEADDR too) are allowed beside it, every other
// socket is refused the port until the test ends.
func SharedPort(t testing.TB) string {
	t.Helper()
	fd, port := bindUnlistened(t, [4]byte{}, true)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	return strconv.Itoa(port)
}

// bindUnlistened binds a TCP socket to addr and a port the kernel picks, without
// listening, and returns it with the port.
func bindUnlistened(t testing.TB, addr [4]byte, reuse bool) (int, int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("transporttest: socket: %v", err)
	}
	if reuse {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			_ = syscall.Close(fd)
			t.Fatalf("transporttest: SO_REUSEADDR: %v", err)
		}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: addr}); err != nil {
		_ = syscall.Close(fd)
		t.Fatalf("transporttest: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		t.Fatalf("transporttest: getsockname: %v", err)
	}
	return fd, sa.(*syscall.SockaddrInet4).Port
}

// Silent is a TCP listener that accepts connections and never answers: the client
// connects, sends, and waits. It counts what it accepted, so a test can prove that a
// connection did (or did not) arrive.
type Silent struct {
	// Addr is "127.0.0.1:port".
	Addr     string
	ln       net.Listener
	accepted atomic.Int64
	arrived  count
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
		s.arrived.add()
	}
}

// AssertNothingArrived proves that no connection reached the listener so far: it
// makes one connection itself and waits until that one is accepted; accepts are in
// arrival order, so finding Accepted() == 1 then proves that none came before. It
// fails t otherwise, or when its own connection is not accepted within 10 s.
func (s *Silent) AssertNothingArrived(t testing.TB) {
	t.Helper()
	c, err := net.Dial("tcp4", s.Addr)
	if err != nil {
		t.Fatalf("transporttest: control connection: %v", err)
	}
	defer c.Close()
	select {
	case <-s.Connected(1):
	case <-time.After(10 * time.Second):
		t.Fatal("transporttest: the control connection was never accepted")
	}
	if n := s.Accepted(); n != 1 {
		t.Fatalf("the listener accepted %d connections, want only the control one", n)
	}
}

// Accepted is the number of connections accepted so far.
func (s *Silent) Accepted() int { return int(s.accepted.Load()) }

// Connected returns a channel closed once n connections have been accepted (at once
// when they already have). Accepts are in arrival order, so waiting for a control
// connection made last and then finding Accepted() == 1 proves that nothing before it
// arrived.
func (s *Silent) Connected(n int) <-chan struct{} { return s.arrived.reached(n) }

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
