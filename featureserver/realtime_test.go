package featureserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// arrivals records when an application received each request, on the real clock.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
	four  chan struct{} // closed at the fourth
}

func newArrivals() *arrivals { return &arrivals{four: make(chan struct{})} }

func (a *arrivals) add() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.times = append(a.times, time.Now())
	if len(a.times) == 4 {
		close(a.four)
	}
}

// wantRampGaps checks that four requests came at about 0, 0.5, 1.5 and 3.5 s: each
// gap at least most of its delay (no upper bound: a loaded machine is only slower).
func (a *arrivals) wantRampGaps(t *testing.T) {
	t.Helper()
	select {
	case <-a.four:
	case <-time.After(30 * time.Second):
		t.Fatal("the app never got its fourth request")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, least := range []time.Duration{400 * time.Millisecond, 900 * time.Millisecond, 1900 * time.Millisecond} {
		if gap := a.times[i+1].Sub(a.times[i]); gap < least {
			t.Errorf("request %d came %v after request %d, want at least %v (the ramp's delay, on the real clock)", i+2, gap, i+1, least)
		}
	}
}

// unavailableApp answers every request 503, each counted on got.
func unavailableApp(t *testing.T, got *arrivals) *httptest.Server {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(app.Close)
	return app
}

// On a node an HTTP app failing 503 under #rc=3&rp=5xx gets its 4 requests at the
// ramp's times, measured at the app: the retry delays pass for real.
func TestNodeHookRetriesWaitForReal(t *testing.T) {
	t.Parallel()
	retriesWaitForReal(t, func(app string) string { return app + "/call#rc=3&rp=5xx" }, "call-hook-failed")
}

// Likewise the upgrades of a WebSocket app that answers 503.
func TestNodeWebSocketConnectRetriesWaitForReal(t *testing.T) {
	t.Parallel()
	retriesWaitForReal(t, func(app string) string { return "ws" + strings.TrimPrefix(app, "http") + "/ws#rc=3&rp=5xx" }, "ws-connect-failed")
}

// retriesWaitForReal calls appURL(the URL of an app failing 503) and checks the app's
// requests came at the ramp's gaps and the call ended with reason.
func retriesWaitForReal(t *testing.T, appURL func(app string) string, reason string) {
	t.Helper()
	got := newArrivals()
	app := unavailableApp(t, got)
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	sid := n.startCall(acct, appURL(app.URL), nil)
	got.wantRampGaps(t)
	if v := n.waitCall(acct, sid); v.Reason != reason {
		t.Errorf("call ended with %s, want %s", v.Reason, reason)
	}
}

// The node's call limits reach its calls: with SWITCHBOARD_MAX_CALL_REQUESTS=10 an
// application redirecting to itself gets 10 requests and the call ends max-requests.
func TestNodeCallLimits(t *testing.T) {
	t.Parallel()
	app := testkit.NewRedirectLoop(t)
	n := startNode(t, func(c *Config) { c.MaxCallRequests = 10 })
	acct := n.createAccount("acme")
	v := n.waitCall(acct, n.startCall(acct, app.URL+"/loop", nil))
	if hits := app.Hits(); v.Reason != "max-requests" || hits != 10 {
		t.Errorf("call ended %s after %d requests, want max-requests after 10", v.Reason, hits)
	}
}

// A WebSocket app that drops mid-call and answers 503 while it restarts gets its
// reconnect attempts at 0.5, 1.5 and 3.5 s after the drop (#rc=3), on the real clock.
func TestNodeWebSocketReconnectBackoffIsReal(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		dropped  time.Time
		attempts []time.Time
		first    = true
	)
	three := make(chan struct{})
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		isFirst := first
		first = false
		if !isFirst {
			attempts = append(attempts, time.Now())
			if len(attempts) == 3 {
				close(three)
			}
		}
		mu.Unlock()
		if !isFirst {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, data, err := c.Read(r.Context())
		if err != nil {
			return
		}
		var m struct {
			MsgID string `json:"msgid"`
		}
		_ = json.Unmarshal(data, &m)
		_ = c.Write(r.Context(), websocket.MessageText, fmt.Appendf(nil, `{"type":"ack","msgid":%q,"data":[{"verb":"pause","length":60}]}`, m.MsgID))
		mu.Lock()
		dropped = time.Now()
		mu.Unlock()
		_ = c.Close(websocket.StatusInternalError, "restarting") // a drop: not 1000
	}))
	t.Cleanup(app.Close)
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	sid := n.startCall(acct, "ws"+strings.TrimPrefix(app.URL, "http")+"/ws#rc=3&rp=5xx", nil)
	select {
	case <-three:
	case <-time.After(30 * time.Second):
		t.Fatal("the app never saw three reconnect attempts")
	}
	mu.Lock()
	prev := dropped
	for i, least := range []time.Duration{400 * time.Millisecond, 900 * time.Millisecond, 1900 * time.Millisecond} {
		if gap := attempts[i].Sub(prev); gap < least {
			t.Errorf("reconnect attempt %d came %v after the previous step, want at least %v", i+1, gap, least)
		}
		prev = attempts[i]
	}
	mu.Unlock()
	if v := n.waitCall(acct, sid); v.Reason != "reconnect-failed" {
		t.Errorf("call ended with %s, want reconnect-failed", v.Reason)
	}
}
