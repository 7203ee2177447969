package transport

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// ClientOptions configure NewHTTPClient. Zero values take the defaults below.
type ClientOptions struct {
	// ConnectTimeout bounds one connection: name lookup, TCP connect and TLS
	// handshake together. Default 10 s.
	ConnectTimeout time.Duration
	// TLSHandshakeTimeout, when > 0, bounds the TLS handshake on its own, started
	// once TCP is connected. 0: the handshake shares ConnectTimeout's budget.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for response headers once the request is
	// written. 0 means no limit (WebSocket dials bound the handshake by context).
	ResponseHeaderTimeout time.Duration
	// Resolver resolves host names. Default net.DefaultResolver.
	Resolver Resolver
	// TLSConfig is cloned for each TLS connection (tests set RootCAs). NextProtos is
	// always HTTP/1.1.
	TLSConfig *tls.Config
	// MaxIdleConnsPerHost keeps that many idle connections per host. Default 4. A
	// client that many calls share at once (simulate --concurrency) sizes it to them,
	// so that connections are reused instead of closed and reopened.
	MaxIdleConnsPerHost int
	// Connect, when set, makes each connection to an address the egress rules have
	// passed (see ConnectFunc). Default: connect through the operating system.
	Connect ConnectFunc

	// DisableKeepAlives gives every request a connection of its own, closed once its
	// answer is read: nothing is pooled. WebSocket upgrades need it (a WebSocket
	// attempt is a fresh connection, as in jambonz: docs/call-control.md §4), and so
	// does a HookRequest with its own Connect. Default false: connections are pooled.
	DisableKeepAlives bool

	// network, when set, connects in place of the operating system once the egress
	// rules have passed the address. Only tests set it (export_test.go), to run the
	// client on an in-memory network under testing/synctest.
	network *network
}

// network is a replacement for the operating system's sockets.
type network struct {
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// ConnectFunc makes the connection to an address ("ip:port") once the egress rules
// have passed it, the IP included: dial connects it (through the operating system, or
// a client's own ConnectFunc), and a ConnectFunc may wrap what dial returns, or fail
// without dialing. Being called only after the checks, it cannot reach a destination
// the rules refuse. Scenario faults use it (a refused connection, latency on every
// message: callctl), and tests use it to connect to an in-memory network
// (transporttest.Pipes).
type ConnectFunc func(ctx context.Context, network, address string, dial func(ctx context.Context, network, address string) (net.Conn, error)) (net.Conn, error)

// DefaultConnectTimeout is JAMBONES_HTTP_TIMEOUT's default.
const DefaultConnectTimeout = 10 * time.Second

// WithDefaults returns o with every zero value replaced by its default. Every value
// is accepted: a ConnectTimeout or MaxIdleConnsPerHost below zero takes its default
// too, so there is nothing for NewHTTPClient to refuse.
func (o ClientOptions) WithDefaults() ClientOptions {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = 4
	}
	return o
}

// NewHTTPClient returns the HTTP client every outbound request goes through: URLs
// are checked with rules.CheckURL before anything is sent, the host is resolved and
// its addresses checked before every request, a kept-alive connection is reused only
// while its address is one the host resolves to now (egressTransport), every socket's
// IP is checked by the dialer's Control hook, environment proxies are ignored, redirects
// are never followed (the 3xx response is returned as is), and connect and
// response-header waits are bounded by opts. Connection failures are *ConnectError
// (inside the *url.Error the client returns); refusals match ErrEgressRefused.
//
// It also serves WebSocket dials: coder/websocket accepts it as DialOptions.HTTPClient.
func NewHTTPClient(rules EgressRules, opts ClientOptions) *http.Client {
	opts = opts.WithDefaults()
	d := newEgressDialer(rules, opts)
	base := &http.Transport{
		Proxy:                 nil, // environment proxies ignored on purpose
		DialContext:           d.DialContext,
		DialTLSContext:        d.DialTLSContext,
		ResponseHeaderTimeout: opts.ResponseHeaderTimeout,
		MaxIdleConns:          max(100, opts.MaxIdleConnsPerHost),
		MaxIdleConnsPerHost:   opts.MaxIdleConnsPerHost,
		DisableKeepAlives:     opts.DisableKeepAlives,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: &egressTransport{rules: rules, dialer: d, base: base},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
