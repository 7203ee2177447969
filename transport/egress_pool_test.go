package transport_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// switchingResolver answers one address for every name until switched to another.
type switchingResolver struct {
	mu      sync.Mutex
	addr    netip.Addr
	lookups int
}

func (r *switchingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	return []netip.Addr{r.addr}, nil
}

func (r *switchingResolver) set(addr string) {
	r.mu.Lock()
	r.addr = netip.MustParseAddr(addr)
	r.mu.Unlock()
}

func (r *switchingResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}

// post sends one POST with a rewindable body and reports whether the connection it
// went on was reused.
func post(t *testing.T, client *http.Client, u string) (*http.Response, bool, error) {
	t.Helper()
	var reused bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, reused, err
}

// TestPooledConnectionNotReusedAfterRebinding: a host answered on a kept-alive
// connection, then started to resolve to a refused address. The next request is
// refused as an egress refusal, though the pool still holds a connection to the old
// address: the host is resolved and checked before every request (docs/outbox.md §2
// step 1), not only when a connection is opened.
func TestPooledConnectionNotReusedAfterRebinding(t *testing.T) {
	t.Parallel()
	port, srv, private := rebindingTargets(t)
	res := &switchingResolver{addr: netip.MustParseAddr("127.0.0.1")}
	rules := rebindingRules()
	client := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: res, ConnectTimeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	u := "http://rebind.example:" + port + "/hook"

	for i := range 2 { // the second proves the connection is kept alive
		if _, reused, err := post(t, client, u); err != nil || reused != (i == 1) {
			t.Fatalf("request %d: err %v, reused %v", i+1, err, reused)
		}
	}
	res.set("127.0.0.2")
	_, _, err := post(t, client, u)
	if !errors.Is(err, transport.ErrEgressRefused) || transport.Classify(err) != retry.EgressRefused {
		t.Fatalf("after rebinding: %v, want an egress refusal", err)
	}
	if n := len(srv.RequestsTo("/hook")); n != 2 {
		t.Fatalf("old address got %d requests, want 2 (none on the pooled connection after rebinding)", n)
	}
	if res.count() != 3 {
		t.Errorf("%d lookups for 3 requests, want one each", res.count())
	}
	private.AssertNothingArrived(t)
}

// TestPooledConnectionFollowsResolution: when a host moves to another allowed
// address, the next request goes on a new connection to the new address; requests
// after it reuse that one (keep-alive stays).
func TestPooledConnectionFollowsResolution(t *testing.T) {
	t.Parallel()
	port := transporttest.SharedPort(t)
	oldSrv := transporttest.NewServerOn(t, "127.0.0.1:"+port)
	newSrv := transporttest.NewServerOn(t, "127.0.0.2:"+port)
	res := &switchingResolver{addr: netip.MustParseAddr("127.0.0.1")}
	client := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{Resolver: res, ConnectTimeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	u := "http://moving.example:" + port + "/hook"

	if _, _, err := post(t, client, u); err != nil {
		t.Fatal(err)
	}
	res.set("127.0.0.2")
	for i := range 3 {
		if _, reused, err := post(t, client, u); err != nil || reused != (i > 0) {
			t.Fatalf("request %d after the move: err %v, reused %v", i+1, err, reused)
		}
	}
	if o, n := len(oldSrv.RequestsTo("/hook")), newSrv.RequestsTo("/hook"); o != 1 || len(n) != 3 {
		t.Fatalf("old address got %d, new %d requests; want 1 and 3", o, len(n))
	} else if n[1].RemoteAddr != n[0].RemoteAddr || n[2].RemoteAddr != n[0].RemoteAddr {
		t.Errorf("new address served on several connections: %s %s %s", n[0].RemoteAddr, n[1].RemoteAddr, n[2].RemoteAddr)
	}
}

// TestPooledTLSConnectionFollowsResolution: the same through TLS, where the
// connection the pool holds is a *tls.Conn over the dialed socket.
func TestPooledTLSConnectionFollowsResolution(t *testing.T) {
	t.Parallel()
	port := transporttest.SharedPort(t)
	var hits [2]atomic.Int32
	servers := make([]*httptest.Server, 2)
	for i, addr := range []string{"127.0.0.1:", "127.0.0.2:"} {
		ln, err := net.Listen("tcp4", addr+port)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits[i].Add(1) }))
		srv.Listener.Close()
		srv.Listener = ln
		srv.StartTLS()
		t.Cleanup(srv.Close)
		servers[i] = srv
	}
	res := &switchingResolver{addr: netip.MustParseAddr("127.0.0.1")}
	pool := x509.NewCertPool()
	pool.AddCert(servers[0].Certificate())
	cfg := &tls.Config{RootCAs: pool, ServerName: "example.com"} // httptest's certificate names it
	client := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{Resolver: res, TLSConfig: cfg, ConnectTimeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	u := "https://tls.example:" + port + "/hook"
	for i := range 2 {
		if _, reused, err := post(t, client, u); err != nil || reused != (i == 1) {
			t.Fatalf("request %d: err %v, reused %v", i+1, err, reused)
		}
	}
	res.set("127.0.0.2")
	for i := range 2 {
		if _, reused, err := post(t, client, u); err != nil || reused != (i == 1) {
			t.Fatalf("request %d after the move: err %v, reused %v", i+1, err, reused)
		}
	}
	if a, b := hits[0].Load(), hits[1].Load(); a != 2 || b != 2 {
		t.Fatalf("old address got %d, new %d requests; want 2 and 2", a, b)
	}
}

// TestDenyHosts: names on the deny-list, and names under a denied suffix, are
// refused as egress refusals before any lookup, whatever they resolve to and even
// when the allow-list names them; other names pass.
func TestDenyHosts(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	var lookups sync.Map
	resolver := transport.ResolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		lookups.Store(host, true)
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	})
	rules := transport.CallControlRules(true)
	rules.DenyHosts = []string{"Blocked.Example.", ".internal.example", "*.corp.example", ""}
	rules.AllowHosts = []string{"blocked.example"}
	client := transport.NewHTTPClient(rules, transport.ClientOptions{Resolver: resolver, ConnectTimeout: 5 * time.Second})
	defer client.CloseIdleConnections()
	for host, denied := range map[string]bool{
		"blocked.example": true, "BLOCKED.example.": true, "a.internal.example": true, "x.y.corp.example": true,
		"internal.example": false, "notblocked.example": false, "corp.example": false, "sub.blocked.example": false,
	} {
		_, _, err := post(t, client, "http://"+host+":"+port+"/")
		if denied {
			var re *transport.RefusedError
			if !errors.As(err, &re) || transport.Classify(err) != retry.EgressRefused || !strings.Contains(re.Reason, "denied") {
				t.Errorf("%s: %v, want a deny-list refusal", host, err)
			}
			if _, looked := lookups.Load(host); looked {
				t.Errorf("%s: looked up before the refusal", host)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v, want it allowed", host, err)
		}
	}
	u, _ := url.Parse("http://a.internal.example/")
	if err := rules.CheckURL(u); !errors.Is(err, transport.ErrEgressRefused) {
		t.Errorf("CheckURL: %v", err)
	}
}
