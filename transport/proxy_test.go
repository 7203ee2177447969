package transport_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-voice/switchboard/transport"
)

// connectProxy is an HTTP CONNECT proxy on loopback that records what it was asked
// (the CONNECT target and its Proxy-Authorization) and tunnels to the target, or
// answers refuse when it is set.
type connectProxy struct {
	ln      net.Listener
	mu      sync.Mutex
	asked   []string
	auth    []string
	refuse  int
	tunnels sync.WaitGroup
}

func newConnectProxy(t *testing.T) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{ln: ln}
	p.tunnels.Add(1)
	go func() {
		defer p.tunnels.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.tunnels.Add(1)
			go func() { defer p.tunnels.Done(); p.serve(c) }()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); p.tunnels.Wait() })
	return p
}

func (p *connectProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	p.mu.Lock()
	p.asked = append(p.asked, req.Host)
	p.auth = append(p.auth, req.Header.Get("Proxy-Authorization"))
	refuse := p.refuse
	p.mu.Unlock()
	if refuse != 0 {
		_, _ = io.WriteString(c, "HTTP/1.1 "+strconv.Itoa(refuse)+" Refused\r\nContent-Length: 0\r\n\r\n")
		return
	}
	target, err := net.Dial("tcp", req.Host)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer target.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() { _, _ = io.Copy(target, br); _ = target.(*net.TCPConn).CloseWrite(); close(done) }()
	_, _ = io.Copy(c, target)
	<-done
}

func (p *connectProxy) seen() (asked, auth []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...), append([]string(nil), p.auth...)
}

// resolveTo resolves every name to ip.
func resolveTo(ip string) transport.Resolver {
	return transport.ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	})
}

// TestProxyConnect: through an egress proxy, the destination's name is resolved and
// its address checked by the egress rules as without one, and the proxy is asked
// for that checked address (never the name), with its credentials; TLS is with the
// destination's name; a destination the rules refuse never reaches the proxy; a
// proxy that refuses fails the attempt as a connection error.
func TestProxyConnect(t *testing.T) {
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok "+r.Host) }))
	defer dest.Close()
	tlsDest := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "tls") }))
	defer tlsDest.Close()
	p := newConnectProxy(t)
	proxyURL, err := transport.ParseProxyURL("http://relay:s3cret@" + p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rules := transport.PublicOnly()
	rules.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} // 127.0.0.1 stands for a public address
	tlsCfg := tlsDest.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsCfg.ServerName = "example.com" // httptest's certificate names example.com
	client := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: resolveTo("127.0.0.1"),
		Connect: transport.ProxyConnect(proxyURL), TLSConfig: tlsCfg})
	defer client.CloseIdleConnections()

	_, port, _ := net.SplitHostPort(dest.Listener.Addr().String())
	resp, err := client.Get("http://hooks.example:" + port + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok hooks.example:"+port {
		t.Fatalf("answer %q", body)
	}
	_, tlsPort, _ := net.SplitHostPort(tlsDest.Listener.Addr().String())
	resp, err = client.Get("https://example.com:" + tlsPort + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	asked, auth := p.seen()
	want := []string{"127.0.0.1:" + port, "127.0.0.1:" + tlsPort}
	if strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Fatalf("the proxy was asked %v, want the checked addresses %v", asked, want)
	}
	if auth[0] != "Basic cmVsYXk6czNjcmV0" {
		t.Fatalf("Proxy-Authorization %q", auth[0])
	}

	// Resolving to a refused address: refused before the proxy hears of it.
	refusing := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: resolveTo("10.1.2.3"), Connect: transport.ProxyConnect(proxyURL)})
	if _, err := refusing.Get("http://internal.example:" + port + "/"); !errors.Is(err, transport.ErrEgressRefused) {
		t.Fatalf("a refused destination: %v", err)
	}
	if _, err := refusing.Get("http://127.0.0.2:" + port + "/"); !errors.Is(err, transport.ErrEgressRefused) {
		t.Fatalf("a refused IP literal: %v", err)
	}
	if asked, _ := p.seen(); len(asked) != 2 {
		t.Fatalf("the proxy was asked %v for refused destinations", asked)
	}

	p.mu.Lock()
	p.refuse = http.StatusForbidden
	p.mu.Unlock()
	fresh := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: resolveTo("127.0.0.1"), Connect: transport.ProxyConnect(proxyURL)})
	_, err = fresh.Get("http://hooks.example:" + port + "/")
	var ce *transport.ConnectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "403") || errors.Is(err, transport.ErrEgressRefused) {
		t.Fatalf("a proxy that refuses: %v", err)
	}
}

func TestParseProxyURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:3128", "http://u:p@proxy.internal:8080/"} {
		if _, err := transport.ParseProxyURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"https://proxy:443", "socks5://proxy:1080", "http://proxy", "http://proxy:3128/path", "http://:3128", "::"} {
		if _, err := transport.ParseProxyURL(bad); !errors.Is(err, transport.ErrBadProxyURL) {
			t.Errorf("%s: %v, want ErrBadProxyURL", bad, err)
		}
	}
}
