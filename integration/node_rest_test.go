package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// restClient drives @jambonz/node-client's REST client (testdata/node/rest_client.js)
// against a node: every operation goes through the official client, unmodified,
// and what the client returns (or throws) comes back.
type restClient struct {
	t     *testing.T
	stdin io.WriteCloser
	mu    sync.Mutex
	next  int
	wait  map[int]chan restResult
}

type restResult struct {
	OK         bool            `json:"ok"`
	Value      json.RawMessage `json:"value"`
	Error      string          `json:"error"`
	StatusCode int             `json:"statusCode"`
}

func startRESTClient(t *testing.T, baseURL string) *restClient {
	t.Helper()
	node, modules := requireNodeSDKs(t)
	cmd := exec.Command(node, filepath.Join(nodeTestdata, "rest_client.js"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "BASE_URL="+baseURL)
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &restClient{t: t, stdin: stdin, wait: map[int]chan restResult{}}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			var msg struct {
				ID    *int   `json:"id"`
				Event string `json:"event"`
				restResult
			}
			if json.Unmarshal(sc.Bytes(), &msg) != nil {
				continue
			}
			if msg.Event == "ready" {
				close(ready)
				continue
			}
			if msg.ID == nil {
				continue
			}
			c.mu.Lock()
			ch := c.wait[*msg.ID]
			c.mu.Unlock()
			if ch != nil {
				ch <- msg.restResult
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		waitOrKill(cmd, 5*time.Second)
		if t.Failed() {
			t.Logf("rest_client.js stderr:\n%s", stderr.String())
		}
	})
	select {
	case <-ready:
	case <-time.After(appStartTimeout):
		t.Fatalf("rest_client.js did not start; stderr:\n%s", stderr.String())
	}
	return c
}

// call runs entity.op(args...) on the client of account and token.
func (c *restClient) call(account, token, entity, op string, args ...any) restResult {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan restResult, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	if args == nil {
		args = []any{}
	}
	line, _ := json.Marshal(map[string]any{"id": id, "account": account, "token": token, "entity": entity, "op": op, "args": args})
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("%s.%s: %v", entity, op, err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(appEventTimeout):
		c.t.Fatalf("%s.%s(%v): no answer from the client", entity, op, args)
		return restResult{}
	}
}

// must runs the operation and fails the test unless the client returned.
func (c *restClient) must(account, token, entity, op string, args ...any) json.RawMessage {
	c.t.Helper()
	r := c.call(account, token, entity, op, args...)
	if !r.OK {
		c.t.Fatalf("%s.%s(%v) threw: %s (status %d)", entity, op, args, r.Error, r.StatusCode)
	}
	return r.Value
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

type sdkCall struct {
	CallSid        string `json:"call_sid"`
	AccountSid     string `json:"account_sid"`
	ApplicationSid string `json:"application_sid"`
	From           string `json:"from"`
	To             string `json:"to"`
	Direction      string `json:"direction"`
	CallStatus     string `json:"call_status"`
	Active         bool   `json:"active"`
	Reason         string `json:"reason"`
}

type sdkApplication struct {
	Sid            string `json:"sid"`
	ApplicationSid string `json:"application_sid"`
	AccountSid     string `json:"account_sid"`
	Name           string `json:"name"`
	CallHook       struct {
		URL string `json:"url"`
	} `json:"call_hook"`
	CallStatusHook *struct {
		URL string `json:"url"`
	} `json:"call_status_hook"`
}

// waitSDKCall polls calls.retrieve through the client until the call has ended.
func waitSDKCall(t *testing.T, c *restClient, a serveAccount, sid string) sdkCall {
	t.Helper()
	deadline := time.Now().Add(appEventTimeout)
	for time.Now().Before(deadline) {
		v := decode[sdkCall](t, c.must(a.AccountSid, a.APIToken, "calls", "retrieve", sid))
		if !v.Active {
			return v
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("call %s did not end", sid)
	return sdkCall{}
}

// sessionOf returns the data of the first message of type typ the app got for the
// call.
func sessionOf(app *exampleapp.WSApp, callSid, typ string) map[string]any {
	for _, m := range app.Received() {
		if m.CallSid == callSid && m.Type == typ {
			var data map[string]any
			_ = json.Unmarshal(m.Data, &data)
			if data == nil {
				data = map[string]any{}
			}
			data["hook"] = m.Hook
			return data
		}
	}
	return nil
}

// TestNodeRESTClient drives a real `switchboard serve` with @jambonz/node-client's
// REST client through every operation of issue 14 item 1, checking what the client
// returns: applications create/retrieve/list/update/delete, calls create (target
// objects, application_sid or call_hook + call_status_hook, strings or objects),
// retrieve, list, update by PUT (mute, redirect relative and absolute with a
// status hook, completed, no-answer) and delete; and that account B's token sees
// none of account A's objects (404) through the same client.
func TestNodeRESTClient(t *testing.T) {
	t.Parallel()
	var p *serveProcess
	t.Cleanup(func() { // registered first, so it runs after serve exited
		if t.Failed() && p != nil {
			t.Logf("serve stderr:\n%s", p.stderr)
		}
	})
	p = startServe(t, filepath.Join(t.TempDir(), "node.db"))
	sdk := startRESTClient(t, p.base)
	acctA, acctB := p.account(), p.account()
	A, tokA := acctA.AccountSid, acctA.APIToken

	wsApp := &exampleapp.WSApp{Waiting: true}
	wsSrv := httptest.NewServer(wsApp)
	t.Cleanup(wsSrv.Close)
	wsURL := "ws" + strings.TrimPrefix(wsSrv.URL, "http")
	hooks := newHookReceiver(t)
	hooks.script("/moved", func(int) (int, string) { return 200, `[{"verb":"say","text":"moved"},{"verb":"hangup"}]` })
	// /slow holds the call hook until the test ends: the call stays unanswered.
	slowGate := newRequestGate(1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { slowGate.hold(r) }))
	t.Cleanup(slow.Close)
	t.Cleanup(slowGate.open)

	// Applications.
	appSid := decode[string](t, sdk.must(A, tokA, "applications", "create", map[string]any{
		"name": "sdk app", "call_hook": map[string]any{"url": wsURL, "method": "POST"}, "call_status_hook": hooks.URL + "/app-status"}))
	if len(appSid) != 36 {
		t.Fatalf("applications.create returned %q, want the application's sid", appSid)
	}
	app := decode[sdkApplication](t, sdk.must(A, tokA, "applications", "retrieve", appSid))
	if app.ApplicationSid != appSid || app.Sid != appSid || app.Name != "sdk app" || app.AccountSid != A || app.CallHook.URL != wsURL {
		t.Errorf("applications.retrieve = %+v", app)
	}
	if apps := decode[[]sdkApplication](t, sdk.must(A, tokA, "applications", "list")); len(apps) != 1 || apps[0].ApplicationSid != appSid {
		t.Errorf("applications.list = %+v, want the one application", apps)
	}
	// jambonz's PUT updates the fields given: the hooks stay as they were.
	sdk.must(A, tokA, "applications", "update", appSid, map[string]any{"name": "renamed"})
	if app := decode[sdkApplication](t, sdk.must(A, tokA, "applications", "retrieve", appSid)); app.Name != "renamed" || app.CallHook.URL != wsURL ||
		app.CallStatusHook == nil || app.CallStatusHook.URL != hooks.URL+"/app-status" {
		t.Errorf("after applications.update of the name alone: %+v", app)
	}

	// A call of the application, to a phone target: outbound, its application in
	// every payload.
	sid1 := decode[string](t, sdk.must(A, tokA, "calls", "create", map[string]any{
		"from": "+15550001111", "to": map[string]any{"type": "phone", "number": "+15550002222"}, "application_sid": appSid}))
	waitLiveN(t, wsApp, 1)
	c1 := decode[sdkCall](t, sdk.must(A, tokA, "calls", "retrieve", sid1))
	if c1.CallSid != sid1 || c1.Direction != "outbound" || c1.ApplicationSid != appSid || c1.From != "+15550001111" || c1.To != "+15550002222" || !c1.Active {
		t.Errorf("calls.retrieve = %+v, want the active outbound call of the application", c1)
	}
	if s := sessionOf(wsApp, sid1, "session:new"); s == nil || s["direction"] != "outbound" || s["application_sid"] != appSid || s["to"] != "+15550002222" {
		t.Errorf("session:new of the call = %v, want outbound with application_sid %s", s, appSid)
	}
	if list := decode[[]sdkCall](t, sdk.must(A, tokA, "calls", "list")); len(list) != 1 || list[0].CallSid != sid1 {
		t.Errorf("calls.list = %+v, want the one call", list)
	}
	sdk.must(A, tokA, "calls", "update", sid1, map[string]any{"mute_status": "mute"})
	// Redirect to an absolute URL, with a status hook from then on.
	sdk.must(A, tokA, "calls", "update", sid1, map[string]any{
		"call_hook": map[string]any{"url": hooks.URL + "/moved"}, "call_status_hook": map[string]any{"url": hooks.URL + "/moved-status"}})
	if c := waitSDKCall(t, sdk, acctA, sid1); c.CallStatus != "completed" || c.Reason != "hangup-verb" {
		t.Errorf("after the redirect: %+v, want completed by the new app's hangup", c)
	}
	// jambonz's live call control ignores call_status_hook (compat warning): the
	// notifications keep going to the application's status hook.
	waitFor(t, "the completed notification at the application's status hook", func() bool {
		// Delivery order is not promised: any of them.
		for _, r := range hooks.requests("/app-status") {
			if strings.Contains(string(r.body), `"completed"`) {
				return true
			}
		}
		return false
	})

	// An inline call_hook without the five speech settings: jambonz's API answers
	// 400 (jambonz-api-server validateCreateCall), and the client throws.
	if r := sdk.call(A, tokA, "calls", "create", map[string]any{
		"from": "+15550001111", "to": map[string]any{"type": "phone", "number": "+15550002222"},
		"call_hook": wsURL + "/inline", "call_status_hook": hooks.URL + "/inline-status"}); r.OK ||
		r.StatusCode != http.StatusBadRequest {
		t.Errorf("create with an inline call_hook and no speech settings: ok %v, status %d (%s), want a 400", r.OK, r.StatusCode, r.Error)
	}
	// An inline call_hook (a string) with its status hook and speech settings, to a
	// sip target: no application in any payload; a relative redirect moves it
	// within its app; completed hangs it up.
	sid2 := decode[string](t, sdk.must(A, tokA, "calls", "create", testkit.WithSpeech(map[string]any{
		"from": "+15550001111", "to": map[string]any{"type": "sip", "sipUri": "sip:bob@example.com"},
		"call_hook": wsURL + "/inline", "call_status_hook": hooks.URL + "/inline-status"})))
	waitLiveN(t, wsApp, 1)
	if s := sessionOf(wsApp, sid2, "session:new"); s == nil || s["direction"] != "outbound" || s["to"] != "sip:bob@example.com" {
		t.Errorf("session:new of the inline call = %v", s)
	} else if _, has := s["application_sid"]; has {
		t.Errorf("session:new of an inline call carries application_sid %v, want none", s["application_sid"])
	}
	sdk.must(A, tokA, "calls", "update", sid2, map[string]any{"call_hook": "/elsewhere"})
	waitFor(t, "session:redirect", func() bool { return sessionOf(wsApp, sid2, "session:redirect") != nil })
	if s := sessionOf(wsApp, sid2, "session:redirect"); !strings.HasSuffix(fmt.Sprint(s["hook"]), "/elsewhere") {
		t.Errorf("session:redirect = %v, want the relative hook", s)
	}
	// The app answers the redirect with verbs that answer the call; completed hangs
	// up an answered call (an unanswered one ends failed), so wait for the answer.
	waitFor(t, "the redirected call answered", func() bool {
		c := decode[sdkCall](t, sdk.must(A, tokA, "calls", "retrieve", sid2))
		return c.CallStatus == "in-progress" || !c.Active
	})
	sdk.must(A, tokA, "calls", "update", sid2, map[string]any{"call_status": "completed"})
	if c := waitSDKCall(t, sdk, acctA, sid2); c.CallStatus != "completed" || c.ApplicationSid != "" {
		t.Errorf("after completed: %+v, want completed with no application", c)
	}

	// no-answer cancels a call whose far end has not answered yet: it rings for 50 s
	// (the scenario's answer), and jambonz requests the call hook only after the
	// answer.
	sid3 := decode[string](t, sdk.must(A, tokA, "calls", "create", testkit.WithSpeech(map[string]any{
		"from": "+15550001111", "to": map[string]any{"type": "user", "name": "alice"},
		"call_hook": map[string]any{"url": slow.URL + "/call"}, "call_status_hook": map[string]any{"url": hooks.URL + "/slow-status"},
		"scenario": map[string]any{"answer": map[string]any{"after": "50s"}}})))
	waitFor(t, "the call ringing", func() bool {
		return decode[sdkCall](t, sdk.must(A, tokA, "calls", "retrieve", sid3)).CallStatus == "ringing"
	})
	sdk.must(A, tokA, "calls", "update", sid3, map[string]any{"call_status": "no-answer"})
	if c := waitSDKCall(t, sdk, acctA, sid3); c.CallStatus != "no-answer" || c.To != "alice" {
		t.Errorf("after no-answer: %+v, want no-answer", c)
	}

	// Account B's token sees none of A's objects, by A's account or its own.
	B, tokB := acctB.AccountSid, acctB.APIToken
	for _, as := range []string{A, B} {
		for _, op := range []struct {
			entity, op string
			args       []any
		}{
			{"calls", "retrieve", []any{sid1}},
			{"calls", "update", []any{sid2, map[string]any{"call_status": "completed"}}},
			{"calls", "delete", []any{sid1}},
			{"applications", "retrieve", []any{appSid}},
			{"applications", "update", []any{appSid, map[string]any{"name": "stolen", "call_hook": wsURL}}},
			{"applications", "delete", []any{appSid}},
		} {
			if r := sdk.call(as, tokB, op.entity, op.op, op.args...); r.OK || r.StatusCode != 404 && !strings.Contains(r.Error, "not found") {
				t.Errorf("B's token, account %s: %s.%s = %+v, want not found", as, op.entity, op.op, r)
			}
		}
	}
	if r := sdk.call(A, tokB, "calls", "list"); r.OK || r.StatusCode != 404 {
		t.Errorf("B's token listing A's calls: %+v, want 404", r)
	}
	if list := decode[[]sdkCall](t, sdk.must(B, tokB, "calls", "list")); len(list) != 0 {
		t.Errorf("B's calls.list = %+v, want none", list)
	}
	if apps := decode[[]sdkApplication](t, sdk.must(B, tokB, "applications", "list")); len(apps) != 0 {
		t.Errorf("B's applications.list = %+v, want none", apps)
	}
	if code, raw := p.do("GET", "/v1/Accounts/"+A, tokB, nil, nil); code != http.StatusNotFound || strings.Contains(string(raw), "secret\":\"") {
		t.Errorf("B reading A's account (its secrets): %d %s", code, raw)
	}
	if app := decode[sdkApplication](t, sdk.must(A, tokA, "applications", "retrieve", appSid)); app.Name != "renamed" {
		t.Errorf("B changed A's application: %+v", app)
	}

	// Deletes: the call's record and the application go.
	sdk.must(A, tokA, "calls", "delete", sid2)
	if r := sdk.call(A, tokA, "calls", "retrieve", sid2); r.OK || !strings.Contains(r.Error, "not found") {
		t.Errorf("calls.retrieve of a deleted call: %+v", r)
	}
	if list := decode[[]sdkCall](t, sdk.must(A, tokA, "calls", "list")); len(list) != 2 {
		t.Errorf("calls.list after a delete: %+v, want the 2 others", list)
	}
	sdk.must(A, tokA, "applications", "delete", appSid)
	if r := sdk.call(A, tokA, "applications", "retrieve", appSid); r.OK || !strings.Contains(r.Error, "not found") {
		t.Errorf("applications.retrieve of a deleted application: %+v", r)
	}
}

func waitLiveN(t *testing.T, app *exampleapp.WSApp, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := app.WaitLive(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
