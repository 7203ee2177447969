package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host name. *net.Resolver implements it; tests
// inject their own to control what a name resolves to.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// LookupNetIP implements Resolver.
func (f ResolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// ConnectError wraps every failure to establish a connection: name lookup, TCP
// connect, TLS handshake. Errors outside a *ConnectError happened after the
// connection was up, which is how Classify tells a connect timeout (ct) from a
// response-header timeout (rt).
type ConnectError struct {
	// Op is "lookup", "dial" or "tls".
	Op string
	// Addr is the host:port being connected.
	Addr string
	Err  error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("connect (%s %s): %v", e.Op, e.Addr, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// NewDialer returns a dialer whose Control hook checks, with rules, the exact IP of
// every socket before it connects (IPv4-mapped addresses unmapped first), so a
// refused address never sees a SYN. connectTimeout bounds each dial (0: none).
func NewDialer(rules EgressRules, connectTimeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: connectTimeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			return rules.checkDialAddress(address)
		},
	}
}

func (r EgressRules) checkDialAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &RefusedError{Host: address, Reason: "unparseable dial address", Rules: r.Name}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &RefusedError{Host: host, Reason: "dial address is not an IP", Rules: r.Name}
	}
	return r.CheckIP(ip)
}

// egressDialer resolves names itself (through an injectable Resolver) and dials the
// resulting addresses one by one through the checking dialer, so that the address
// checked is the address connected.
type egressDialer struct {
	rules      EgressRules
	checked    *net.Dialer // Control hook enforces rules
	trusted    *net.Dialer // for AllowHosts names: no IP check
	resolver   Resolver
	timeout    time.Duration // whole connect: lookup + TCP (+ TLS unless tlsTimeout)
	tlsTimeout time.Duration
	tls        *tls.Config
	network    *network // tests only: see ClientOptions.network
	connectFn  ConnectFunc
}

func newEgressDialer(rules EgressRules, opts ClientOptions) *egressDialer {
	res := opts.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	cfg := opts.TLSConfig
	if cfg == nil {
		cfg = &tls.Config{}
	}
	return &egressDialer{
		rules:      rules,
		checked:    NewDialer(rules, 0),
		trusted:    &net.Dialer{},
		resolver:   res,
		timeout:    opts.ConnectTimeout,
		tlsTimeout: opts.TLSHandshakeTimeout,
		tls:        cfg,
		network:    opts.network,
		connectFn:  opts.Connect,
	}
}

// DialContext dials addr ("host:port"); errors are *ConnectError.
func (d *egressDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	return d.dial(ctx, network, addr)
}

func (d *egressDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &ConnectError{Op: "dial", Addr: addr, Err: err}
	}
	if err := d.rules.checkHost(host); err != nil {
		return nil, &ConnectError{Op: "dial", Addr: addr, Err: err}
	}
	checked := !d.rules.hostAllowed(host)
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if dest, ok := destinationFor(ctx, host); ok && checked {
		// Resolved and checked for this request just before it (egressTransport):
		// connect to exactly those addresses.
		ips = dest.ips
	} else if ips, err = d.lookup(ctx, host, addr); err != nil {
		return nil, err
	}
	portNum, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, &ConnectError{Op: "dial", Addr: addr, Err: fmt.Errorf("invalid port %q", port)}
	}
	var first error
	for _, ip := range ips {
		conn, err := d.connect(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(portNum)).String(), checked)
		if err == nil {
			// Recorded before any TLS: a handshake's failure can tell of the peer.
			peersOf(ctx).add(Peer{Host: host, Addr: ip.Unmap()})
			return &dialedConn{Conn: conn, host: host, ip: ip.Unmap()}, nil
		}
		var re *RefusedError
		if errors.As(err, &re) && re.Host == "" {
			re.Host = host
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &ConnectError{Op: "dial", Addr: addr, Err: first}
}

// connect dials one address, through the checking dialer unless the host is one the
// rules trust.
func (d *egressDialer) connect(ctx context.Context, network, address string, checked bool) (net.Conn, error) {
	if d.connectFn != nil {
		// The checks come first: a ConnectFunc that refuses without dialing must not
		// turn an egress refusal into a connection failure.
		if checked {
			if err := d.rules.checkDialAddress(address); err != nil {
				return nil, err
			}
		}
		return d.connectFn(ctx, network, address, func(ctx context.Context, network, address string) (net.Conn, error) {
			return d.rawConnect(ctx, network, address, checked)
		})
	}
	return d.rawConnect(ctx, network, address, checked)
}

// rawConnect dials one address without the ConnectFunc.
func (d *egressDialer) rawConnect(ctx context.Context, network, address string, checked bool) (net.Conn, error) {
	if d.network != nil {
		if checked {
			if err := d.rules.checkDialAddress(address); err != nil {
				return nil, err
			}
		}
		return d.network.dial(ctx, network, address)
	}
	if checked {
		return d.checked.DialContext(ctx, network, address)
	}
	return d.trusted.DialContext(ctx, network, address)
}

// DialTLSContext dials addr and completes the TLS handshake, within the connect
// deadline or, when set, its own TLS handshake deadline; handshake failures are
// *ConnectError with Op "tls".
func (d *egressDialer) DialTLSContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var raw net.Conn
	var err error
	if d.tlsTimeout > 0 {
		raw, err = d.DialContext(ctx, network, addr)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.tlsTimeout)
		defer cancel()
	} else {
		if d.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d.timeout)
			defer cancel()
		}
		raw, err = d.dial(ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	cfg := d.tls.Clone()
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		cfg.ServerName = host
	}
	// HTTP/1.1 only: WebSocket upgrades need it, and hooks gain nothing from h2.
	cfg.NextProtos = []string{"http/1.1"}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, &ConnectError{Op: "tls", Addr: addr, Err: err}
	}
	return conn, nil
}

// Timeout reports whether the connection attempt timed out, so that *url.Error's
// Timeout (and net.Error checks) see through a *ConnectError.
func (e *ConnectError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, context.DeadlineExceeded)
}
