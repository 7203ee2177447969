package nodeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// waitingCall starts a call on an idle WebSocket app and waits until it is in session.
func waitingCall(t *testing.T, n *testAPI, acct testAccount) string {
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

func TestLiveCallControl(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	path := func(sid string) string { return "/v1/Accounts/" + acct.AccountSid + "/Calls/" + sid }

	t.Run("hangup", func(t *testing.T) {
		sid := waitingCall(t, n, acct)
		if code, _, raw := n.do("POST", path(sid), acct.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusAccepted {
			t.Fatalf("hang up: %d %s", code, raw)
		}
		v := n.waitCall(acct, sid)
		var last struct{ Kind, Reason string }
		if len(v.Timeline) > 0 {
			_ = json.Unmarshal(v.Timeline[len(v.Timeline)-1], &last)
		}
		if v.Reason != "api-hangup" || last.Kind != "call.end" || last.Reason != "api-hangup" {
			t.Errorf("ended with %q, last timeline line %+v; want api-hangup in both", v.Reason, last)
		}
		if code, _, _ := n.do("POST", path(sid), acct.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusNotFound && code != http.StatusConflict {
			t.Errorf("hanging up an ended call: %d", code)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"verb":"say","text":"moved"},{"verb":"hangup"}]`)
		}))
		defer app.Close()
		sid := waitingCall(t, n, acct)
		if code, _, raw := n.do("POST", path(sid), acct.APIToken, map[string]any{"call_hook": map[string]any{"url": app.URL + "/moved"}}, nil); code != http.StatusAccepted {
			t.Fatalf("redirect: %d %s", code, raw)
		}
		v := n.waitCall(acct, sid)
		// The waiting app's answer (unless the redirect came first), then the new
		// app's say and hangup.
		if n := strings.Count(strings.Join(timelineKinds(v), ","), "verb.start"); v.Reason != "hangup-verb" || n < 2 || n > 3 {
			t.Errorf("after redirect: %s, %v", v.Reason, timelineKinds(v))
		}
	})
	t.Run("mute", func(t *testing.T) {
		sid := waitingCall(t, n, acct)
		for _, m := range []string{"mute", "unmute"} {
			// PUT answers as jambonz documents UPDATE: 204, no body.
			if code, _, raw := n.do("PUT", path(sid), acct.APIToken, map[string]any{"mute_status": m}, nil); code != http.StatusNoContent || len(raw) != 0 {
				t.Fatalf("%s: %d %q, want 204 and no body", m, code, raw)
			}
		}
		n.do("POST", path(sid), acct.APIToken, map[string]any{"call_status": "completed"}, nil)
		n.waitCall(acct, sid)
	})
	t.Run("redirect of a websocket app to another websocket URL stays on its socket", func(t *testing.T) {
		// jambonz's WebSocket requestor sends session:redirect on its own socket for
		// any URL that is not http(s), with the URL as the hook: nothing connects to
		// ws://127.0.0.1:1, and the app's ack (its welcome) goes on.
		sid := waitingCall(t, n, acct)
		if code, _, raw := n.do("POST", path(sid), acct.APIToken, map[string]any{"call_hook": map[string]any{"url": "ws://127.0.0.1:1/x#rc=0"}}, nil); code != http.StatusAccepted {
			t.Fatalf("redirect to ws: %d %s", code, raw)
		}
		v := n.waitCall(acct, sid)
		if v.Reason != "hangup-verb" || !strings.Contains(strings.Join(timelineKinds(v), ","), "msg.sent") {
			t.Errorf("ended %q, %v", v.Reason, timelineKinds(v))
		}
	})
	t.Run("redirect to a bad URL", func(t *testing.T) {
		sid := waitingCall(t, n, acct)
		if code, _, _ := n.do("POST", path(sid), acct.APIToken, map[string]any{"call_hook": map[string]any{"url": "ftp://x/"}}, nil); code != http.StatusUnprocessableEntity {
			t.Errorf("redirect to ftp: %d, want 422", code)
		}
		n.do("POST", path(sid), acct.APIToken, map[string]any{"call_status": "completed"}, nil)
		n.waitCall(acct, sid)
	})
}

func TestScenarioThroughAPI(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/call" {
			fmt.Fprint(w, `[{"verb":"gather","input":["digits"],"numDigits":1,"actionHook":"/digits"}]`)
			return
		}
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}))
	defer app.Close()
	acct := n.createAccount("acme")
	var call struct {
		CallSid string `json:"call_sid"`
	}
	code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL + "/call"}, "from": "a", "to": "b",
		"scenario": map[string]any{
			"caller": map[string]any{"gathers": []any{map[string]any{"digits": "7"}}},
			"expect": map[string]any{"verbs": []string{"gather", "say"}},
		}}), &call)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, raw)
	}
	v := n.waitCall(acct, call.CallSid)
	if len(v.ExpectationsFailed) != 1 || !strings.Contains(v.ExpectationsFailed[0], "verbs") {
		t.Errorf("expectations failed %q, want the verbs expectation", v.ExpectationsFailed)
	}
	found := false
	for _, raw := range v.Timeline {
		found = found || strings.Contains(string(raw), `"/digits"`) || strings.Contains(string(raw), `/digits"`)
	}
	if !found {
		t.Errorf("the gather's action hook was not called with the scripted digits: %v", timelineKinds(v))
	}
}

// A hang-up ends the call at once even while session:new waits for an ack that
// never comes.
func TestHangupWhileWaitingForAck(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{ackTimeout: 30 * time.Second})
	acct := n.createAccount("acme")
	got := make(chan struct{}, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, _, _ = c.Read(r.Context()) // session:new, never acked
		got <- struct{}{}
		_, _, _ = c.Read(r.Context())
	}))
	defer app.Close()
	var call struct {
		CallSid string `json:"call_sid"`
	}
	n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": "ws" + strings.TrimPrefix(app.URL, "http")}, "from": "a", "to": "b"}), &call)
	<-got
	start := time.Now()
	if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+call.CallSid, acct.APIToken,
		map[string]any{"call_status": "completed"}, nil); code != http.StatusAccepted {
		t.Fatalf("hang up: %d %s", code, raw)
	}
	v := n.waitCall(acct, call.CallSid)
	if v.Reason != "api-hangup" || time.Since(start) > 20*time.Second {
		t.Errorf("ended %q after %v, want api-hangup well before the 30 s ack timeout", v.Reason, time.Since(start))
	}
}
