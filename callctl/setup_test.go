package callctl_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// baseOptions returns Options wired to real loopback transport: the hook client and
// the WebSocket egress client. The call's simulated time runs on a manual clock that
// stands still, so a timeline's times are exactly its media and retry delays; the
// network's waits are real. The shared hook client must never sleep itself: every
// call's retry delays pass on the call's own clock.
func baseOptions(t *testing.T, appURL string) callctl.Options {
	t.Helper()
	hooks := transport.NewHookClient(transport.HookClientOptions{
		Rules: transport.CallControlRules(true), Timeout: 2 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error {
			t.Errorf("the shared hook client slept %v itself: a call's delays pass on its clock", d)
			return nil
		},
	})
	httpClient := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
	t.Cleanup(func() {
		hooks.CloseIdleConnections()
		httpClient.CloseIdleConnections()
	})
	return callctl.Options{
		AppURL:      appURL,
		Hooks:       hooks,
		WebSocket:   wsclient.Options{HTTPClient: httpClient, HandshakeTimeout: 5 * time.Second},
		EgressRules: transport.CallControlRules(true),
		AckTimeout:  2 * time.Second,
		IdleLimit:   2 * time.Second,
		Clock:       testkit.NewClock(),
	}
}

// parallelTests are the tests that called waitsOutATimeout.
var parallelTests sync.Map

// waitsOutATimeout marks a test whose call must wait out a real timeout (an ack that
// never comes, pongs that stop): it runs in parallel with the others like it, so
// their waits overlap. The timeouts stay generous (seconds), so that what must
// happen before them (a loopback ack) always does. Its call's goroutines are checked
// for leaks once the package's tests are done (TestMain), not after the call.
func waitsOutATimeout(t *testing.T) {
	t.Parallel()
	parallelTests.Store(t, true)
}

// run runs a call and checks afterwards that it left no goroutine behind. The check
// compares with the goroutines alive when the call started, so tests that use it do
// not run in parallel (except those of waitsOutATimeout, not checked here).
func run(t *testing.T, o callctl.Options) *callctl.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before := goleak.IgnoreCurrent()
	r, err := callctl.Run(ctx, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, parallel := parallelTests.Load(t); parallel {
		return r
	}
	// However the call ended, none of its goroutines (session, reader, keepalive,
	// dials) outlives it. Server-side handlers and pooled idle HTTP connections of
	// the shared hook client are not the call's.
	if err := goleak.Find(before,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe.func1"),
	); err != nil {
		t.Fatalf("goroutines left after the call ended (%s): %v", r.Reason, err)
	}
	if testing.Verbose() {
		for _, e := range r.Timeline {
			t.Log(e)
		}
	}
	return r
}

// serve starts h on loopback; for a WebSocket app the URL is ws://.
func serve(t *testing.T, h http.Handler, ws bool) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	if ws {
		return "ws" + strings.TrimPrefix(srv.URL, "http")
	}
	return srv.URL
}

// kinds lists the timeline's kinds, optionally only those given.
func kinds(r *callctl.Result, only ...callctl.Kind) []string {
	var out []string
	for _, e := range r.Timeline {
		if len(only) == 0 || containsKind(only, e.Kind) {
			s := string(e.Kind)
			switch e.Kind {
			case callctl.KindMsgSent, callctl.KindMsgRecv:
				s += " " + e.Type
			case callctl.KindVerbStart:
				s += " " + e.Verb
			case callctl.KindWSClose:
				s += " " + itoa(e.Code)
			case callctl.KindAlert:
				s += " " + string(e.AlertType)
			}
			out = append(out, s)
		}
	}
	return out
}

func containsKind(ks []callctl.Kind, k callctl.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func hasAlert(r *callctl.Result, t callctl.AlertType) bool {
	for _, a := range r.Alerts {
		if a.Type == t {
			return true
		}
	}
	return false
}

func wantEnd(t *testing.T, r *callctl.Result, status callctl.Status, reason string, sip int) {
	t.Helper()
	if r.Status != status || r.Reason != reason || r.SIPStatus != sip {
		t.Fatalf("call ended %s/%s/%d, want %s/%s/%d\n%s", r.Status, r.Reason, r.SIPStatus, status, reason, sip, strings.Join(kinds(r), "\n"))
	}
}
