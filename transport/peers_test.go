package transport_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/switchboard-voice/switchboard/transport"
)

// get requests u with ctx and reads the answer.
func get(ctx context.Context, client *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// TracePeers records where a context's requests connected: the host and the address
// of a new connection, of a pooled one given to a later request, of a TLS
// connection whose handshake failed, and through an egress proxy the destination's
// address, not the proxy's; a connection another dialer made makes the
// destinations unknown. A context derived from a traced one records into both.
func TestTracePeers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close) // after the parallel subtests
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	client := transport.NewHTTPClient(loopbackRules(), transport.ClientOptions{Resolver: resolveTo("127.0.0.1")})
	t.Cleanup(client.CloseIdleConnections)
	app := transport.Peer{Host: "app.example", Addr: netip.MustParseAddr("127.0.0.1")}

	ctx, call := transport.TracePeers(context.Background())
	if !call.All(func(transport.Peer) bool { return false }) {
		t.Fatal("All before any request: want true")
	}
	if err := get(ctx, client, "http://app.example:"+port+"/"); err != nil {
		t.Fatal(err)
	}
	hookCtx, hook := transport.TracePeers(ctx)
	if err := get(hookCtx, client, "http://app.example:"+port+"/again"); err != nil {
		t.Fatal(err)
	}
	if got := hook.List(); len(got) != 1 || got[0] != app {
		t.Fatalf("the request given a pooled connection recorded %v, want %v", got, app)
	}
	if got := call.List(); len(got) != 1 || got[0] != app {
		t.Fatalf("the call recorded %v, want %v once", got, app)
	}
	public := func(p transport.Peer) bool { return transport.PublicOnly().Admits(p.Host, p.Addr) }
	if call.All(public) {
		t.Fatal("All(public) true for a loopback peer")
	}

	t.Run("tls handshake failed", func(t *testing.T) {
		t.Parallel()
		tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is the point
		tlsSrv.StartTLS()
		defer tlsSrv.Close()
		_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
		ctx, peers := transport.TracePeers(context.Background())
		// The node does not trust httptest's certificate: the handshake fails.
		if err := get(ctx, client, "https://app.example:"+tlsPort+"/"); err == nil {
			t.Fatal("the handshake succeeded")
		}
		if got := peers.List(); len(got) != 1 || got[0] != app {
			t.Fatalf("recorded %v, want %v", got, app)
		}
	})
	t.Run("through a proxy", func(t *testing.T) {
		t.Parallel()
		p := newConnectProxy(t)
		proxyURL, err := transport.ParseProxyURL("http://" + p.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// The destination resolves to 127.0.0.1; the proxy listens on 127.0.0.1 too,
		// so what tells them apart is the port: the proxy's is never recorded.
		proxied := transport.NewHTTPClient(loopbackRules(), transport.ClientOptions{Resolver: resolveTo("127.0.0.1"), Connect: transport.ProxyConnect(proxyURL)})
		defer proxied.CloseIdleConnections()
		ctx, peers := transport.TracePeers(context.Background())
		if err := get(ctx, proxied, "http://app.example:"+port+"/"); err != nil {
			t.Fatal(err)
		}
		if got := peers.List(); len(got) != 1 || got[0] != app {
			t.Fatalf("recorded %v, want the destination %v", got, app)
		}
		if asked, _ := p.seen(); len(asked) != 1 || asked[0] != "127.0.0.1:"+port {
			t.Fatalf("the proxy was asked %v", asked)
		}
	})
	t.Run("another dialer", func(t *testing.T) {
		t.Parallel()
		ctx, peers := transport.TracePeers(context.Background())
		if err := get(ctx, srv.Client(), srv.URL); err != nil {
			t.Fatal(err)
		}
		if peers.All(func(transport.Peer) bool { return true }) {
			t.Fatal("All true after a connection of another dialer")
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		ctx, peers := transport.TracePeers(context.Background())
		public := transport.NewHTTPClient(transport.PublicOnly(), transport.ClientOptions{Resolver: resolveTo("127.0.0.1")})
		if err := get(ctx, public, "http://app.example:"+port+"/"); !errors.Is(err, transport.ErrEgressRefused) {
			t.Fatalf("want a refusal: %v", err)
		}
		if got := peers.List(); len(got) != 0 {
			t.Fatalf("a refused destination was recorded: %v", got)
		}
	})
}

// Admits says whether the rules would have connected a host's address: by the
// address, or by the host name the rules trust, never a denied name.
func TestAdmits(t *testing.T) {
	t.Parallel()
	rules := transport.PublicOnly()
	rules.AllowHosts = []string{"sidecar.internal"}
	rules.DenyHosts = []string{".blocked.example"}
	private, public := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("93.184.216.34")
	for _, tc := range []struct {
		host string
		ip   netip.Addr
		want bool
	}{
		{"hooks.example", public, true},
		{"hooks.example", private, false},
		{"10.0.0.1", private, false},
		{"SideCar.Internal.", private, true},
		{"api.blocked.example", public, false},
		{"hooks.example", netip.MustParseAddr("::ffff:10.0.0.1"), false},
	} {
		if got := rules.Admits(tc.host, tc.ip); got != tc.want {
			t.Errorf("Admits(%q, %s) = %v, want %v", tc.host, tc.ip, got, tc.want)
		}
	}
}
