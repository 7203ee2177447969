package transport

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrBadProxyURL is wrapped by ParseProxyURL's errors.
var ErrBadProxyURL = errors.New("transport: bad proxy URL")

// ParseProxyURL checks the URL of an HTTP CONNECT proxy: http://[user:password@]host:port
// with nothing after the port.
func ParseProxyURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadProxyURL, err)
	}
	switch {
	case u.Scheme != "http":
		return nil, fmt.Errorf("%w: the scheme is http:// (an HTTP CONNECT proxy), not %q", ErrBadProxyURL, u.Scheme)
	case u.Hostname() == "" || u.Port() == "":
		return nil, fmt.Errorf("%w: want http://host:port", ErrBadProxyURL)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%w: nothing after host:port", ErrBadProxyURL)
	}
	return u, nil
}

// ProxyConnect returns a ConnectFunc that reaches each address through the HTTP
// CONNECT proxy at proxy (ParseProxyURL), for a static source address: the egress
// rules have passed the address, an IP, before it is called (docs/outbox.md §6), and
// the proxy is asked for exactly that IP and port, so that it never resolves a name
// itself to somewhere the rules would refuse. The proxy itself is the operator's and
// is connected without the rules; its user-info, if any, is sent as Basic
// Proxy-Authorization. A proxy that refuses (any answer but 2xx) fails the
// connection with an error naming its status.
func ProxyConnect(proxy *url.URL) ConnectFunc {
	proxyAddr := proxy.Host
	var auth string
	if proxy.User != nil {
		pass, _ := proxy.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(proxy.User.Username()+":"+pass))
	}
	var d net.Dialer
	return func(ctx context.Context, network, address string, _ func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", proxyAddr)
		if err != nil {
			return nil, fmt.Errorf("egress proxy %s: %w", proxyAddr, err)
		}
		// The handshake is bounded by ctx (the connect timeout) as the dial is.
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		tunnel, err := connectThrough(conn, address, auth)
		if !stop() {
			_ = conn.Close()
			return nil, fmt.Errorf("egress proxy %s: %w", proxyAddr, ctx.Err())
		}
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("egress proxy %s: %w", proxyAddr, err)
		}
		return tunnel, nil
	}
}

// connectThrough asks the proxy on conn for a tunnel to address.
func connectThrough(conn net.Conn, address, auth string) (net.Conn, error) {
	var req strings.Builder
	fmt.Fprintf(&req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", address, address)
	if auth != "" {
		fmt.Fprintf(&req, "Proxy-Authorization: %s\r\n", auth)
	}
	req.WriteString("\r\n")
	if _, err := conn.Write([]byte(req.String())); err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("reading its answer to CONNECT %s: %w", address, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("CONNECT %s answered %s", address, resp.Status)
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

// bufferedConn is a connection whose first bytes were read ahead into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
