package transport_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// TestEgressBypassAttempts: each trick to reach a loopback listener under the
// public-only rules is refused before any connection is made.
func TestEgressBypassAttempts(t *testing.T) {
	t.Parallel()
	silent := transporttest.NewSilent(t)
	_, port, _ := net.SplitHostPort(silent.Addr)
	resolver := staticResolver(map[string][]string{
		"localhost":      {"127.0.0.1"},
		"evil.example":   {"::ffff:127.0.0.1"},
		"many.example":   {"10.9.9.9", "127.0.0.1", "169.254.169.254"},
		"public.example": {"93.184.216.34"},
	})
	client := transport.NewHTTPClient(transport.PublicOnly(), transport.ClientOptions{Resolver: resolver, ConnectTimeout: 2 * time.Second})
	defer client.CloseIdleConnections()
	urls := []string{
		"http://127.0.0.1:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::ffff:7f00:1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://[::]:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST.:" + port + "/",
		"http://evil.example:" + port + "/",
		"http://many.example:" + port + "/",
		"http://public.example@127.0.0.1:" + port + "/",
		"http://public.example:" + port + "@127.0.0.1:" + port + "/",
		"http://2130706433:" + port + "/",
		"http://127.1:" + port + "/",
		"http://0x7f000001:" + port + "/",
		"http://[fe80::1%25lo]:" + port + "/",
	}
	for _, u := range urls {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s succeeded", u)
			continue
		}
		if !errors.Is(err, transport.ErrEgressRefused) {
			t.Errorf("GET %s: %v, want an egress refusal", u, err)
		}
		if c := transport.Classify(err); c != retry.EgressRefused {
			t.Errorf("GET %s classified %s", u, c)
		}
	}
	silent.AssertNothingArrived(t)
}

// TestDialControlRefusesExactIP runs the dialer's Control hook on addresses that
// must never be connected (no traffic leaves loopback in this test), then proves on
// a real socket that the hook is what stops the connection.
func TestDialControlRefusesExactIP(t *testing.T) {
	t.Parallel()
	d := transport.NewDialer(transport.PublicOnly(), time.Second)
	cc := transport.NewDialer(transport.CallControlRules(false), time.Second)
	for _, addr := range []string{
		"10.0.0.1:80", "[::ffff:10.0.0.1]:80", "[64:ff9b::a00:1]:80", "[2002:c0a8:101::]:80",
		"[fe80::1%eth0]:80", "169.254.169.254:80", "0.0.0.0:80", "[::]:80", "127.0.0.1:80",
		"not-an-ip:80", "missing-port",
	} {
		if err := d.Control("tcp", addr, nil); !errors.Is(err, transport.ErrEgressRefused) {
			t.Errorf("PublicOnly Control(%s) = %v", addr, err)
		}
	}
	for addr, ok := range map[string]bool{
		"10.0.0.1:80": true, "[::ffff:192.168.0.1]:80": true, "[64:ff9b::a00:1]:80": false,
		"[fe80::1%eth0]:80": false, "169.254.169.254:80": false, "[::ffff:127.0.0.1]:80": false,
	} {
		if err := cc.Control("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("CallControl Control(%s) = %v, want ok=%v", addr, err, ok)
		}
	}

	silent := transporttest.NewSilent(t)
	for _, network := range []string{"tcp", "tcp4"} {
		_, err := d.DialContext(context.Background(), network, silent.Addr)
		var op *net.OpError
		var re *transport.RefusedError
		if !errors.As(err, &op) || !errors.Is(err, transport.ErrEgressRefused) || !errors.As(err, &re) {
			t.Fatalf("DialContext(%s) = %v, want *net.OpError wrapping a refusal", network, err)
		}
		if re.IP != netip.MustParseAddr("127.0.0.1") || re.Reason != "loopback" {
			t.Errorf("refusal carries IP %v reason %q", re.IP, re.Reason)
		}
	}
	silent.AssertNothingArrived(t)
}

// TestEgressRebinding: a name that resolves to an allowed address first and a
// refused one next is refused on the attempt that would connect to the refused one:
// the check is on the address dialed, on every attempt.
func TestEgressRebinding(t *testing.T) {
	t.Parallel()
	port, srv, private := rebindingTargets(t)
	// Connection: close makes the retry dial (and resolve) again.
	fail := transporttest.Step{Status: 500, Header: http.Header{"Connection": {"close"}}}
	srv.Script("/hook", fail)

	var lookups atomic.Int32
	resolver := transport.ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	})
	rules := rebindingRules()
	client, rec := newHookClient(t, transport.HookClientOptions{Rules: rules, Resolver: resolver})
	_, err := client.Do(context.Background(), transport.HookRequest{
		Target: mustTarget(t, "http://rebind.example:"+port+"/hook#rc=3&rp=all"),
	})
	var he *transport.HookError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v, want *HookError", err)
	}
	if len(he.Attempts) != 2 || he.Attempts[0].Class != retry.Status5xx || he.Class != retry.EgressRefused {
		t.Fatalf("attempts %+v, want a 5xx then an egress refusal (not retried)", he.Attempts)
	}
	if !errors.Is(err, transport.ErrEgressRefused) {
		t.Errorf("error %v does not match ErrEgressRefused", err)
	}
	if d := rec.Delays(); len(d) != 1 {
		t.Errorf("delays %v: the refusal must not be retried", d)
	}
	if lookups.Load() != 2 {
		t.Errorf("%d lookups, want 2", lookups.Load())
	}
	private.AssertNothingArrived(t)
}

// TestEgressRedirectTowardPrivate: a redirect to a refused address is neither
// followed nor a success, even when retried.
func TestEgressRedirectTowardPrivate(t *testing.T) {
	t.Parallel()
	private := transporttest.NewSilentOn(t, "127.0.0.2:0")
	srv := transporttest.NewServer(t)
	srv.Script("/hook", transporttest.Redirect(http.StatusTemporaryRedirect, "http://"+private.Addr+"/admin"))
	rules := rebindingRules()

	plain := transport.NewHTTPClient(rules, transport.ClientOptions{})
	defer plain.CloseIdleConnections()
	resp, err := plain.Get(srv.URL + "/hook")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("status %d: the redirect was followed", resp.StatusCode)
	}

	client, _ := newHookClient(t, transport.HookClientOptions{Rules: rules})
	_, err = client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/hook#rc=2&rp=all")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.Redirect || len(he.Attempts) != 3 {
		t.Fatalf("err = %v, want 3 redirect failures", err)
	}
	private.AssertNothingArrived(t)
}

// TestEgressWebSocketDial: the same client refuses WebSocket dials, before connecting.
func TestEgressWebSocketDial(t *testing.T) {
	t.Parallel()
	silent := transporttest.NewSilent(t)
	client := transport.NewHTTPClient(transport.CallControlRules(false), transport.ClientOptions{})
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range []string{"ws://" + silent.Addr + "/ws", "ws://[::ffff:127.0.0.1]:" + strings.Split(silent.Addr, ":")[1] + "/ws"} {
		conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: client, Subprotocols: []string{"ws.jambonz.org"}})
		if err == nil {
			conn.CloseNow()
			t.Fatalf("dial %s succeeded", u)
		}
		if !errors.Is(err, transport.ErrEgressRefused) {
			t.Errorf("dial %s: %v, want an egress refusal", u, err)
		}
	}
	silent.AssertNothingArrived(t)
}

// TestEnvironmentProxyIgnored: HTTP_PROXY pointing at a listener is not used.
func TestEnvironmentProxyIgnored(t *testing.T) {
	proxy := transporttest.NewSilent(t)
	t.Setenv("HTTP_PROXY", "http://"+proxy.Addr)
	t.Setenv("http_proxy", "http://"+proxy.Addr)
	srv := transporttest.NewServer(t)
	u, _ := url.Parse(srv.URL)
	// A name, not "localhost" or a loopback IP: those bypass environment proxies anyway.
	u.Host = "hooks.test:" + u.Port()
	client2 := transport.NewHTTPClient(loopbackRules(), transport.ClientOptions{Resolver: staticResolver(map[string][]string{"hooks.test": {"127.0.0.1"}}), ResponseHeaderTimeout: 2 * time.Second})
	defer client2.CloseIdleConnections()
	resp, err := client2.Get(u.String() + "/x")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if n := len(srv.RequestsTo("/x")); n != 1 {
		t.Fatalf("server saw %d requests", n)
	}
	proxy.AssertNothingArrived(t)
}
