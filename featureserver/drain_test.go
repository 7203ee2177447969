package featureserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// idleWSApp acks session:new with no verbs, so the call waits for a command. It
// returns the app's ws:// URL.
func idleWSApp(t *testing.T) (string, *exampleapp.WSApp) {
	t.Helper()
	app := &exampleapp.WSApp{Waiting: true}
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), app
}

// waitingCall starts a call on an idle WebSocket app and waits until it is in session.
func waitingCall(t *testing.T, n *testNode, acct testAccount) string {
	t.Helper()
	wsURL, app := idleWSApp(t)
	var call struct {
		CallSid string `json:"call_sid"`
	}
	n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": wsURL}, "from": "a", "to": "b"}), &call)
	// In session: a live-call command now finds the call before or after the ack
	// (it is applied once the ack's verbs, none, ran out), never before it started.
	waitLive(t, app, 1)
	return call.CallSid
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

func TestDrainEndsCallsAfterTimeout(t *testing.T) {
	t.Parallel()
	n := startNode(t, func(c *Config) { c.DrainTimeout = 300 * time.Millisecond })
	wsURL, app := idleWSApp(t)
	acct := n.createAccount("acme")
	var call struct {
		CallSid string `json:"call_sid"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": wsURL}, "from": "a", "to": "b"}), &call); code != http.StatusCreated {
		t.Fatalf("create call: %d %s", code, raw)
	}
	waitLive(t, app, 1) // the call is in session, and stays: the app never sends a command
	token, sid := acct.APIToken, acct.AccountSid
	n.stop() // as SIGTERM: drains, then Run returns
	// The record survives in the database with the shutdown reason.
	reopened := startNodeOn(t, n)
	var v nodeapi.CallView
	if code, _, raw := reopened.do("GET", "/v1/Accounts/"+sid+"/Calls/"+call.CallSid, token, nil, &v); code != http.StatusOK {
		t.Fatalf("get call after restart: %d %s", code, raw)
	}
	if v.Active || v.Reason != calls.ReasonNodeShutdown {
		t.Errorf("call after drain: active %v reason %q", v.Active, v.Reason)
	}
}

func TestDrainLetsActiveCallsFinish(t *testing.T) {
	t.Parallel()
	requested := make(chan struct{}, 1)
	release := make(chan struct{})
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested <- struct{}{}
		<-release // the call is in progress until the test lets the app answer
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"bye"},{"verb":"hangup"}]`)
	}))
	defer app.Close()
	n := startNode(t, func(c *Config) { c.DrainTimeout = 20 * time.Second })
	acct := n.createAccount("acme")
	var call struct {
		CallSid string `json:"call_sid"`
	}
	n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL}, "from": "a", "to": "b"}), &call)
	<-requested

	stopped := make(chan struct{})
	go func() { n.stop(); close(stopped) }()
	// While draining, the node takes no new calls but still answers reads.
	<-n.node.calls.Draining() // not ready from before the drain began
	if code, _, raw := n.do("GET", "/readyz", "", nil, nil); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d %s, want 503", code, raw)
	}
	if code, _, _ := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL}, "from": "a", "to": "b"}), nil); code != http.StatusServiceUnavailable {
		t.Errorf("new call while draining: %d, want 503", code)
	}
	close(release)
	<-stopped
	reopened := startNodeOn(t, n)
	var v nodeapi.CallView
	reopened.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+call.CallSid, acct.APIToken, nil, &v)
	if v.Reason != "hangup-verb" || v.CallStatus != "completed" {
		t.Errorf("drained call ended %q/%q, want completed by its hangup verb", v.CallStatus, v.Reason)
	}
}

// An answered call is on record as in progress, with its timeline so far, while it
// runs: a crash of the node then leaves it completed (SIP 200) at the next start, its
// timeline kept, rather than a failed call with no timeline.
func TestAnsweredCallSurvivesACrashOnRecord(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	inActionHook := make(chan struct{}, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/g" {
			inActionHook <- struct{}{}
			select { // the action hook hangs: the call stays answered and active
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"gather","actionHook":"/g"},{"verb":"hangup"}]`)
	}))
	defer app.Close()
	defer close(release)
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	sid := n.startCall(acct, app.URL+"/call", nil)
	loc, err := parseDatabaseURL(n.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitenode.Open(context.Background(), loc.Path, sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The answered call was put on record (on the call's goroutine) before its
	// gather went on to the action hook.
	<-inActionHook
	rec, err := st.GetCall(context.Background(), nodestore.GetCallParams{AccountSid: acct.AccountSid, CallSid: sid})
	if err != nil || rec.CallStatus != "in-progress" || !rec.Active {
		t.Fatalf("record of the answered call: %+v, %v", rec, err)
	}
	// What the next start makes of this record if the node dies now.
	v := calls.Interrupted(rec, time.Now())
	if v.CallStatus != "completed" || v.SipStatus != 200 || v.Reason != calls.ReasonNodeRestart || len(v.Timeline) == 0 || v.Active {
		t.Fatalf("after a crash: %s/%d/%s, %d timeline lines, active %v", v.CallStatus, v.SipStatus, v.Reason, len(v.Timeline), v.Active)
	}
}
