package transport_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// refuseAll is a ConnectFunc that never dials: every connection is refused, as a
// closed port would refuse it.
func refuseAll(calls *atomic.Int64) transport.ConnectFunc {
	return func(_ context.Context, network, address string, _ func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
		calls.Add(1)
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
}

// A ConnectFunc runs only once the egress rules passed the URL and the address: a
// destination the rules refuse stays an egress refusal, never a connection failure of
// the ConnectFunc's making, and the ConnectFunc is not even called.
func TestConnectFuncAfterEgressChecks(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	t.Cleanup(srv.Close)
	var calls atomic.Int64
	for _, tc := range []struct {
		name  string
		rules transport.EgressRules
		url   string
		class retry.Class
		calls int64
	}{
		{"allowed address: the ConnectFunc refuses", loopbackRules(), srv.URL, retry.Connect, 1},
		{"loopback refused by the rules", transport.CallControlRules(false), srv.URL, retry.EgressRefused, 0},
		{"user-info refused by the URL check", loopbackRules(), "", retry.EgressRefused, 0},
	} {
		calls.Store(0)
		c, _ := newHookClient(t, transport.HookClientOptions{Rules: tc.rules, Connect: refuseAll(&calls)})
		target := mustTarget(t, srv.URL)
		if tc.url == "" {
			// fragment.Parse refuses user-info; the egress check stands behind it.
			target.URL.User = url.UserPassword("u", "p")
		} else {
			target = mustTarget(t, tc.url)
		}
		_, err := c.Do(context.Background(), transport.HookRequest{Target: target})
		var he *transport.HookError
		if !errors.As(err, &he) || he.Class != tc.class || calls.Load() != tc.calls {
			t.Errorf("%s: error %v, ConnectFunc called %d times; want class %s, %d calls", tc.name, err, calls.Load(), tc.class, tc.calls)
		}
	}
}

// A request's own Connect makes a connection for each of its attempts (three for
// rc=2 against a 503), and wraps what it dials; requests without one keep using the
// shared pool, untouched by it.
func TestHookRequestConnect(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	remotes := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		remotes[r.RemoteAddr]++
		mu.Unlock()
		if r.URL.Path == "/fail" {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	c, _ := newHookClient(t, transport.HookClientOptions{})
	var dials, wrappedWrites atomic.Int64
	connect := func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
		dials.Add(1)
		conn, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, writes: &wrappedWrites}, nil
	}
	_, err := c.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/fail#rc=2&rp=5xx"), Connect: connect})
	if err == nil {
		t.Fatal("a 503 succeeded")
	}
	if dials.Load() != 3 || wrappedWrites.Load() < 3 {
		t.Fatalf("%d dials and %d writes through the request's Connect, want one dial per attempt (3)", dials.Load(), wrappedWrites.Load())
	}
	for range 2 {
		if _, err := c.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/ok")}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(remotes) != 4 || dials.Load() != 3 {
		t.Fatalf("connections %v, Connect dials %d: want 3 of the faulted request's own and 1 pooled for the other two", remotes, dials.Load())
	}
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// MaxIdleConnsPerHost sizes the pool: with room for as many connections as requests
// run at once, a second wave of requests opens no new connection; with the default of
// 4, it must.
func TestHookPoolSize(t *testing.T) {
	t.Parallel()
	const wave = 8
	for _, tc := range []struct {
		size      int
		wantExact bool
	}{{wave, true}, {0, false}} {
		var conns atomic.Int64
		arrived := make(chan struct{}, wave)
		release := make(chan struct{})
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			arrived <- struct{}{}
			<-release
			w.WriteHeader(204)
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		c, _ := newHookClient(t, transport.HookClientOptions{MaxIdleConnsPerHost: tc.size})
		for range 2 {
			var wg sync.WaitGroup
			for range wave {
				wg.Go(func() {
					if _, err := c.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL)}); err != nil {
						t.Error(err)
					}
				})
			}
			// Every request of the wave is in flight at once before any is answered.
			for range wave {
				<-arrived
			}
			for range wave {
				release <- struct{}{}
			}
			wg.Wait()
		}
		srv.Close()
		if got := conns.Load(); (got == wave) != tc.wantExact {
			t.Errorf("pool of %d: %d connections for two waves of %d requests", tc.size, got, wave)
		}
	}
}
