package transport

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
)

// destination is what one request may connect to: the addresses its host resolved
// to just before the request, those of them the rules allow (docs/outbox.md §2
// step 1). The dialer connects to these, without a lookup of its own, and a pooled
// connection serves the request only when its address is among them.
type destination struct {
	host string // canonical: lower case, no trailing dot
	ips  []netip.Addr
}

// destinationKey carries a request's *destination in its context to the dialer
// (http.Transport dials with the request's context values).
type destinationKey struct{}

func canonicalHost(host string) string { return strings.TrimSuffix(strings.ToLower(host), ".") }

// admits reports whether a connection to ip may carry the request.
func (d *destination) admits(ip netip.Addr) bool { return slices.Contains(d.ips, ip.Unmap()) }

// destinationFor returns the destination the request in ctx resolved for host, if any.
func destinationFor(ctx context.Context, host string) (*destination, bool) {
	d, ok := ctx.Value(destinationKey{}).(*destination)
	if !ok || d.host != canonicalHost(host) {
		return nil, false
	}
	return d, true
}

// resolve looks host up now and keeps the addresses the rules allow. It returns nil
// for an IP literal (CheckURL checked it) or a host the rules trust (AllowHosts:
// connected whatever it resolves to). When every address is refused it returns the
// first refusal inside a *ConnectError, as a dial to them would have; a failed
// lookup is a *ConnectError with Op "lookup".
func (d *egressDialer) resolve(ctx context.Context, host, addr string) (*destination, error) {
	if _, err := netip.ParseAddr(host); err == nil || d.rules.hostAllowed(host) {
		return nil, nil
	}
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	ips, err := d.lookup(ctx, host, addr)
	if err != nil {
		return nil, err
	}
	dest := &destination{host: canonicalHost(host)}
	var first error
	for _, ip := range ips {
		if err := d.rules.CheckIP(ip); err != nil {
			if re, ok := err.(*RefusedError); ok && re.Host == "" {
				re.Host = host
			}
			if first == nil {
				first = err
			}
			continue
		}
		dest.ips = append(dest.ips, ip.Unmap())
	}
	if len(dest.ips) == 0 {
		return nil, &ConnectError{Op: "dial", Addr: addr, Err: first}
	}
	return dest, nil
}

// lookup resolves host; no address is a not-found error.
func (d *egressDialer) lookup(ctx context.Context, host, addr string) ([]netip.Addr, error) {
	ips, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, &ConnectError{Op: "lookup", Addr: addr, Err: err}
	}
	if len(ips) == 0 {
		return nil, &ConnectError{Op: "lookup", Addr: addr, Err: &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}}
	}
	return ips, nil
}

// dialedConn is a connection the egress dialer made, with the host it was dialed
// for and the address it connected.
type dialedConn struct {
	net.Conn
	host string
	ip   netip.Addr
}

// NetConn is the connection the dialedConn wraps (as tls.Conn's NetConn), for those
// that look into the socket (wsclient's poll of a connection read inline).
func (c *dialedConn) NetConn() net.Conn { return c.Conn }

// dialedOf returns the egress dialer's connection under c (seen through TLS), which
// knows the address it connected.
func dialedOf(c net.Conn) (*dialedConn, bool) {
	for c != nil {
		switch v := c.(type) {
		case *dialedConn:
			return v, true
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil, false
		}
	}
	return nil, false
}

// maxStaleRetries bounds how often one request starts again because the connection
// the pool gave it was to an address its host no longer resolves to. The transport
// itself retries on another connection when nothing was written on a reused one;
// these cover the rest (a connection dialed for another request meanwhile).
const maxStaleRetries = 3

// egressTransport checks every request before the pool sees it: the URL
// (CheckURL), then its host resolved afresh (docs/outbox.md §2 step 1). It dials
// only the allowed addresses of that resolution, and lets a kept-alive connection
// carry the request only while its address is one of them: a stale one (the host
// moved, perhaps to a refused address) is closed before anything is written on it,
// and the request goes on a new connection.
type egressTransport struct {
	rules  EgressRules
	dialer *egressDialer
	base   *http.Transport
}

func (t *egressTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.rules.CheckURL(req.URL); err != nil {
		closeBody(req)
		return nil, err
	}
	dest, err := t.dialer.resolve(req.Context(), req.URL.Hostname(), hostPort(req.URL))
	if err != nil {
		closeBody(req)
		return nil, err
	}
	if dest == nil {
		return t.base.RoundTrip(req)
	}
	var stale atomic.Bool
	ctx := context.WithValue(req.Context(), destinationKey{}, dest)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if c, ok := dialedOf(info.Conn); ok && !dest.admits(c.ip) {
			stale.Store(true)
			// The raw socket: a TLS close_notify would still write to it.
			_ = c.Conn.Close()
		}
	}})
	r := req.WithContext(ctx)
	for try := 0; ; try++ {
		resp, err := t.base.RoundTrip(r)
		if err == nil || !stale.Swap(false) || try == maxStaleRetries {
			return resp, err
		}
		// Nothing was sent on the stale connection: send again, with the body
		// rewound, or give up with the error when it cannot be.
		if r.Body != nil && r.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			r = r.Clone(ctx)
			r.Body = body
		}
	}
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (t *egressTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// hostPort is the host:port a URL connects to, for error messages.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
