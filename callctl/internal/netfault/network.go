package netfault

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Config is what goes wrong on the network. The zero Config is a faultless network.
type Config struct {
	// Latency is added to every message each way (a request, its answer, every
	// WebSocket frame); Jitter varies each message's latency by up to this much
	// either way, uniformly, never below zero.
	Latency, Jitter time.Duration
	// SlowApp delays everything the application sends by this much more.
	SlowApp time.Duration
	// Refuse refuses the first Refuse connection attempts of the call; the next
	// Reset attempts connect, and are reset as the application's answer arrives.
	Refuse, Reset int
}

// Active reports whether c injects anything.
func (c Config) Active() bool {
	return c.Latency > 0 || c.Jitter > 0 || c.SlowApp > 0 || c.Refuse > 0 || c.Reset > 0
}

// The faults a Note reports.
const (
	Refused = "refuse"
	Reset   = "reset"
)

// Note is one fault injected on a connection attempt.
type Note struct {
	// Fault is Refused or Reset.
	Fault string
	// Attempt counts the call's connection attempts from 1.
	Attempt int
}

// Network applies a Config to the connections of one call. It is safe for concurrent
// use: the transport dials on goroutines of its own.
type Network struct {
	cfg Config

	mu       sync.Mutex
	rng      *rand.Rand
	attempts int
	notes    []Note
}

// New returns the network of a call; seed (the call's sid) makes its jitter
// reproducible.
func New(cfg Config, seed string) *Network {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	s := h.Sum64()
	return &Network{cfg: cfg, rng: rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))}
}

// Notes returns the faults injected since the last call, in order.
func (n *Network) Notes() []Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.notes
	n.notes = nil
	return out
}

// Connect makes one connection attempt of the call (a transport.ConnectFunc): refused
// without dialing, or dialed and then reset, delayed, or both, as the Config says.
func (n *Network) Connect(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
	n.mu.Lock()
	n.attempts++
	k := n.attempts
	refuse, reset := k <= n.cfg.Refuse, k > n.cfg.Refuse && k <= n.cfg.Refuse+n.cfg.Reset
	switch {
	case refuse:
		n.notes = append(n.notes, Note{Fault: Refused, Attempt: k})
	case reset:
		n.notes = append(n.notes, Note{Fault: Reset, Attempt: k})
	}
	n.mu.Unlock()
	if refuse {
		// What a closed port answers: transport.Classify makes it a connect failure (ct).
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	conn, err := dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if reset {
		conn = &resetConn{Conn: conn}
	}
	if n.cfg.Latency > 0 || n.cfg.Jitter > 0 || n.cfg.SlowApp > 0 {
		conn = newDelayConn(conn, n.latency, func() time.Duration { return n.latency() + n.cfg.SlowApp })
	}
	return conn, nil
}

// latency is one message's latency: Latency ± Jitter, at least zero.
func (n *Network) latency() time.Duration {
	d := n.cfg.Latency
	if j := n.cfg.Jitter; j > 0 {
		n.mu.Lock()
		d += time.Duration(n.rng.Int64N(int64(2*j)+1)) - j
		n.mu.Unlock()
	}
	return max(d, 0)
}

// resetConn is reset as the answer starts to arrive: the application got the request
// and answered, and the call never sees the answer.
type resetConn struct {
	net.Conn
	once sync.Once
}

func (c *resetConn) Read(b []byte) (int, error) {
	_, err := c.Conn.Read(b)
	c.once.Do(func() {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST: the app sees its connection reset
		}
		_ = c.Conn.Close()
	})
	if err != nil {
		return 0, err
	}
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}
