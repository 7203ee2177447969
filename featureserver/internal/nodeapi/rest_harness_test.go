package nodeapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// The REST behaviour tests drive the API over loopback as a client would, with a
// real call manager whose calls reach apps on loopback: what the node adds around
// the API (its outbox, status hooks, cluster, readiness) is tested in featureserver.

const testAdminToken = "admin-token-for-tests-0123456789"

// loopbackNetwork lets calls reach apps on this machine, as simulate's does.
type loopbackNetwork struct {
	rules      transport.EgressRules
	hooks      *transport.HookClient
	ws         *http.Client
	ackTimeout time.Duration
}

func newLoopbackNetwork(ackTimeout time.Duration) *loopbackNetwork {
	rules := transport.CallControlRules(true)
	return &loopbackNetwork{rules: rules, ackTimeout: ackTimeout,
		hooks: transport.NewHookClient(transport.HookClientOptions{Rules: rules}),
		ws:    transport.NewHTTPClient(rules, transport.ClientOptions{DisableKeepAlives: true})}
}

func (n *loopbackNetwork) CallOptions(appURL string) callctl.Options {
	return callctl.Options{AppURL: appURL, Hooks: n.hooks, WebSocket: wsclient.Options{HTTPClient: n.ws},
		EgressRules: n.rules, AckTimeout: n.ackTimeout}
}

func (n *loopbackNetwork) CloseIdleConnections() {
	n.hooks.CloseIdleConnections()
	n.ws.CloseIdleConnections()
}

// testAPI is the API on loopback with a fresh SQLite store and a call manager.
type testAPI struct {
	t     *testing.T
	base  string
	calls *calls.Manager
}

// apiSetup are what a test changes from the default API: its options, and the
// WebSocket ack timeout of its calls.
type apiSetup struct {
	options    func(*Options)
	ackTimeout time.Duration
}

// startAPI serves the API with the admin token testAdminToken (unless setup's
// options change it); its calls are drained and its store closed when t ends.
func startAPI(t *testing.T, setup apiSetup) *testAPI {
	t.Helper()
	store, err := sqlitenode.Open(t.Context(), filepath.Join(t.TempDir(), "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	network := newLoopbackNetwork(setup.ackTimeout)
	m, err := calls.New(calls.Options{Store: store, Network: network, MaxCalls: 100, IdleLimit: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Store: store, Calls: m, AdminToken: testAdminToken, Version: "test",
		CheckNoticeURL: transport.CallControlRules(true).CheckURL}
	if setup.options != nil {
		setup.options(&o)
	}
	mux := http.NewServeMux()
	if err := Register(mux, o); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(mux, zerolog.Nop()))
	t.Cleanup(func() {
		srv.Close()
		m.Drain(0)
		network.CloseIdleConnections()
		store.Close()
	})
	return &testAPI{t: t, base: srv.URL, calls: m}
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (n *testAPI) do(method, path, token string, body any, out any) (int, http.Header, []byte) {
	n.t.Helper()
	return n.doWithOut(method, path, token, body, nil, out)
}

func (n *testAPI) doWithOut(method, path, token string, body any, header http.Header, out any) (int, http.Header, []byte) {
	n.t.Helper()
	resp, raw := testkit.DoJSON(n.t, method, n.base+path, token, body, header, out)
	return resp.StatusCode, resp.Header, raw
}

type testAccount struct {
	AccountSid    string `json:"account_sid"`
	APIToken      string `json:"api_token"`
	WebhookSecret string `json:"webhook_secret"`
}

func (n *testAPI) createAccount(name string) testAccount {
	n.t.Helper()
	var a testAccount
	if code, _, raw := n.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": name}, &a); code != http.StatusCreated {
		n.t.Fatalf("create account: %d %s", code, raw)
	}
	return a
}

// waitCall waits until the manager has recorded the end of a call, and returns the
// call as the API shows it then.
func (n *testAPI) waitCall(acct testAccount, callSid string) CallView {
	n.t.Helper()
	select {
	case <-n.calls.Ended(callSid):
	case <-time.After(20 * time.Second):
		n.t.Fatalf("call %s still active", callSid)
	}
	var v CallView
	code, _, raw := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+callSid, acct.APIToken, nil, &v)
	if code != http.StatusOK {
		n.t.Fatalf("get call: %d %s", code, raw)
	}
	if v.Active {
		n.t.Fatalf("call %s ended but shows as active: %+v", callSid, v)
	}
	return v
}

func timelineKinds(v CallView) []string {
	kinds := make([]string, len(v.Timeline))
	for i, raw := range v.Timeline {
		var e struct {
			Kind string `json:"kind"`
		}
		_ = json.Unmarshal(raw, &e)
		kinds[i] = e.Kind
	}
	return kinds
}

// idleWSApp acks session:new with no verbs, so the call waits for a command. It
// returns the app's ws:// URL.
func idleWSApp(t *testing.T) (string, *exampleapp.WSApp) {
	t.Helper()
	app := &exampleapp.WSApp{Waiting: true}
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), app
}

// waitLive waits until app has n calls in session (session:new received).
func waitLive(t *testing.T, app *exampleapp.WSApp, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := app.WaitLive(ctx, n); err != nil {
		t.Fatal(err)
	}
}
