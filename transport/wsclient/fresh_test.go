package wsclient

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// sdkLikeServer answers upgrades as an app built on @jambonz/node-client-ws does: a
// path it serves is upgraded; any other gets a keep-alive 404 with a body, after which
// the socket is never read again (Node has detached it from its HTTP parser on the
// upgrade event), so a second request sent on it waits forever. It counts the
// connections it accepted.
func sdkLikeServer(t *testing.T) (s *httptest.Server, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	var held sync.WaitGroup
	done := make(chan struct{})
	s = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app" {
			upgradeAndDrain(r.Context(), w, r)
			return
		}
		serveHijacked(w, &held, func(_ net.Conn, rw *bufio.ReadWriter) {
			rw.WriteString("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\nContent-Length: 13\r\n\r\n404 Not Found")
			rw.Flush()
			<-done // never read again, as Node after its upgrade event
		})
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(func() {
		close(done)
		s.CloseClientConnections()
		s.Close()
		held.Wait()
	})
	return s, conns
}

// TestEveryAttemptIsAFreshConnection: docs/call-control.md §4, issue 13. An upgrade
// answered 404 by an SDK-style app must not leave its connection for the retry or
// for the next call's dial: each attempt opens its own connection, with a pooling
// client as with one that keeps nothing alive, so the retry gets its 404 (not a
// handshake timeout) and the next dial to a good path succeeds.
func TestEveryAttemptIsAFreshConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client func(t *testing.T) *http.Client
	}{
		{"pooling client", func(t *testing.T) *http.Client { return loopbackClient(t) }},
		{"client without keep-alives", func(t *testing.T) *http.Client {
			c := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{DisableKeepAlives: true})
			t.Cleanup(c.CloseIdleConnections)
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, conns := sdkLikeServer(t)
			base := "ws" + strings.TrimPrefix(s.URL, "http")
			o := testOptions(t, &testkit.SleepRecorder{})
			o.HTTPClient = tc.client(t)
			_, err := Dial(context.Background(), mustTarget(t, base+"/missing#rc=2&rp=4xx"), o)
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DialError", err)
			}
			if len(de.Attempts) != 3 {
				t.Fatalf("%d attempts, want 3: %v", len(de.Attempts), err)
			}
			for _, a := range de.Attempts {
				if a.Status != http.StatusNotFound || a.Class != retry.Status4xx {
					t.Errorf("attempt %d: status %d class %s (%v), want 404 (4xx)", a.Number, a.Status, a.Class, a.Err)
				}
			}
			if n := conns.Load(); n != 3 {
				t.Errorf("server accepted %d connections for 3 attempts, want 3", n)
			}
			// The next call to the same app.
			c, err := Dial(context.Background(), mustTarget(t, base+"/app#rc=0"), o)
			if err != nil {
				t.Fatalf("dial after the 404s: %v", err)
			}
			c.Close(1000, "")
			if n := conns.Load(); n != 4 {
				t.Errorf("server accepted %d connections for 4 attempts, want 4", n)
			}
		})
	}
}
