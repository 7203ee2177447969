package callctl_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// sessionApp is a WebSocket app that answers each session:new with the messages
// reply returns for its msgid, and otherwise only reads.
func sessionApp(t *testing.T, reply func(msgid string) []string) string {
	t.Helper()
	return serve(t, testkit.JambonzWSApp(func(msgType, msgID string) []string {
		if msgType != "session:new" {
			return nil
		}
		return reply(msgID)
	}), true)
}

// idleWSApp acks session:new with one say and then waits: the call waits for a
// command, which is when a node's live call control matters.
func idleWSApp(t *testing.T) string {
	t.Helper()
	return sessionApp(t, func(msgid string) []string {
		return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"say","text":"hello"}]}`, msgid)}
	})
}

// controlled runs a call against an idle WebSocket app and sends ctl once its first
// verb ended.
func controlled(t *testing.T, o callctl.Options, ctl ...callctl.Control) *callctl.Result {
	t.Helper()
	ch := make(chan callctl.Control, len(ctl))
	o.Control = ch
	sent := false
	o.OnEvent = func(e callctl.Event) {
		if e.Kind == callctl.KindVerbEnd && !sent {
			sent = true
			for _, c := range ctl {
				ch <- c
			}
		}
	}
	return run(t, o)
}

// gatheringApp is an HTTP app that answers each hook with a gather whose relative
// action hook is hook, and hook itself with a hangup; gathered says hook was reached.
func gatheringApp(t *testing.T, hook string) (url string, gathered *atomic.Bool) {
	t.Helper()
	gathered = new(atomic.Bool)
	url = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == hook {
			gathered.Store(true)
			fmt.Fprint(w, `[{"verb":"hangup"}]`)
			return
		}
		fmt.Fprintf(w, `[{"verb":"gather","input":["digits"],"actionHook":%q}]`, hook)
	}), false)
	return url, gathered
}

func TestControlRedirectReplacesVerbs(t *testing.T) {
	redirect := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"redirected"},{"verb":"hangup"}]`)
	}), false)
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	r := controlled(t, o, callctl.Control{Redirect: redirect + "/new-app"})
	if !slices.Equal(r.Verbs, []string{"say", "say", "hangup"}) {
		t.Errorf("verbs %v, want say, say, hangup", r.Verbs)
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Contains(r.Hooks, "/new-app") {
		t.Errorf("hooks %v lack the redirect", r.Hooks)
	}
}

func TestControlHangup(t *testing.T) {
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	mute := true
	r := controlled(t, o, callctl.Control{Mute: &mute}, callctl.Control{Hangup: true})
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAPIHangup, 200)
}

func TestControlRedirectFailureAlertsAndContinues(t *testing.T) {
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	r := controlled(t, o, callctl.Control{Redirect: "http://127.0.0.1:1/unreachable"}, callctl.Control{Hangup: true})
	if !hasAlert(r, callctl.AlertWebhookConnectionFailure) {
		t.Error("a redirect whose app cannot be reached must raise webhook-connection-failure")
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAPIHangup, 200)
}

func TestControlValidate(t *testing.T) {
	yes := true
	for _, bad := range []callctl.Control{{}, {Hangup: true, Mute: &yes}, {Redirect: "http://x/", Hangup: true}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (callctl.Control{Hangup: true}).Validate(); err != nil {
		t.Error(err)
	}
}

// After a redirect to an HTTP app, relative hooks go to that app over HTTP, and the
// WebSocket session that was left is closed with 1000.
func TestControlRedirectSwitchesTransport(t *testing.T) {
	httpApp, gathered := gatheringApp(t, "/gather")
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	o.Script.Gathers = []callctl.GatherInput{{Digits: "5"}}
	r := controlled(t, o, callctl.Control{Redirect: httpApp + "/app"})
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !gathered.Load() {
		t.Errorf("the gather's relative hook did not reach the new HTTP app; hooks %v", r.Hooks)
	}
	if !slices.Contains(kinds(r), "ws.close 1000") {
		t.Errorf("the old WebSocket was not closed with 1000: %v", kinds(r))
	}
}

// An HTTP application redirected to a WebSocket URL opens a new session there
// (jambonz's HTTP requestor switches to a WebSocket and sends session:new); its
// status notifications stay with the status hook.
func TestControlRedirectToWebSocket(t *testing.T) {
	next := sessionApp(t, func(msgid string) []string {
		return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"say","text":"new app"},{"verb":"hangup"}]}`, msgid)}
	})
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"hello"},{"verb":"pause","length":30}]`)
	}), false)
	o := baseOptions(t, app+"/call")
	r := controlled(t, o, callctl.Control{Redirect: next + "/other"})
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"say", "say", "hangup"}) || strings.Count(strings.Join(kinds(r), ","), "session:new") != 1 ||
		slices.Contains(kinds(r), "msg.sent call:status") {
		t.Errorf("verbs %v timeline %v", r.Verbs, kinds(r))
	}
}

// A WebSocket application redirected to a ws(s) URL, even another host's, gets
// session:redirect on its own session with that URL as the hook, as jambonz's
// WebSocket requestor sends any hook that is not http(s).
func TestControlRedirectWSAppToWebSocketURL(t *testing.T) {
	var redirected atomic.Value
	app := serve(t, testkit.JambonzWSApp(func(msgType, msgID string) []string {
		switch msgType {
		case "session:new":
			return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"say","text":"hello"}]}`, msgID)}
		case "session:redirect":
			redirected.Store(true)
			return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"hangup"}]}`, msgID)}
		}
		return nil
	}), true)
	o := baseOptions(t, app)
	o.IdleLimit = 20 * time.Second
	r := controlled(t, o, callctl.Control{Redirect: "ws://other.example.com/next"})
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if redirected.Load() == nil || !slices.Contains(r.Hooks, "ws://other.example.com/next") || len(kinds(r, callctl.KindWSOpen)) != 1 {
		t.Errorf("hooks %v timeline %v", r.Hooks, kinds(r))
	}
}

// An absolute http(s) action hook of a WebSocket app is a webhook, not a verb:hook.
func TestWSAppAbsoluteHTTPHook(t *testing.T) {
	var hit atomic.Bool
	web := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit.Store(r.URL.Path == "/abs")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}), false)
	app := sessionApp(t, func(msgid string) []string {
		return []string{fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"gather","input":["digits"],"actionHook":%q}]}`, msgid, web+"/abs")}
	})
	o := baseOptions(t, app)
	o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !hit.Load() || slices.Contains(kinds(r), "msg.sent verb:hook") {
		t.Errorf("absolute hook: HTTP hit %v, timeline %v", hit.Load(), kinds(r))
	}
}

// A WebSocket application's credentials go on the upgrade as Basic auth.
func TestWSUpgradeBasicAuth(t *testing.T) {
	auth := make(chan string, 1)
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		auth <- u + ":" + p
		http.Error(w, "no", http.StatusForbidden)
	}), true)
	o := baseOptions(t, app+"#rc=0")
	o.Username, o.Password = "alice", "s3cret"
	run(t, o)
	if got := <-auth; got != "alice:s3cret" {
		t.Errorf("upgrade credentials %q", got)
	}
}

// An answered call whose context ends is hung up: completed, SIP 200 (487 is only
// for an INVITE that was never answered).
func TestCanceledAnsweredCallIsHungUp(t *testing.T) {
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.OnEvent = func(e callctl.Event) {
		if e.Kind == callctl.KindVerbEnd {
			cancel()
		}
	}
	r, err := callctl.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonCanceled, 200)
}

// A redirect command whose data is a call hook moves the call to that application.
func TestRedirectCommandWithCallHook(t *testing.T) {
	web := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"moved"},{"verb":"hangup"}]`)
	}), false)
	app := sessionApp(t, func(msgid string) []string {
		return []string{
			fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"answer"}]}`, msgid),
			fmt.Sprintf(`{"type":"command","command":"redirect","data":{"call_hook":%q}}`, web+"/moved"),
		}
	})
	o := baseOptions(t, app)
	o.IdleLimit = 20 * time.Second
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	// The command comes right after the ack: before or after the answer verb ran.
	if v := r.Verbs; len(v) < 2 || !slices.Equal(v[len(v)-2:], []string{"say", "hangup"}) || !slices.Contains(r.Hooks, "/moved") {
		t.Errorf("verbs %v hooks %v", r.Verbs, r.Hooks)
	}
}

// A redirect verb to an absolute URL on another host moves the call to that
// application: its relative hooks go there afterwards.
func TestRedirectVerbToAnotherApp(t *testing.T) {
	second, gathered := gatheringApp(t, "/g2")
	first := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"verb":"redirect","actionHook":%q}]`, second+"/start")
	}), false)
	o := baseOptions(t, first+"/call")
	o.Script.Gathers = []callctl.GatherInput{{Digits: "4"}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !gathered.Load() {
		t.Errorf("the second app's relative hook did not reach it; hooks %v", r.Hooks)
	}
}

// redirectingApp is a WebSocket app that acks session:new with one say and each
// session:redirect with redirected (nil: it never acks them).
func redirectingApp(t *testing.T, redirected []map[string]any) (*wsServer, string) {
	t.Helper()
	return newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"))
		for m := s.next("session:redirect"); m != nil; m = s.next("session:redirect") {
			if redirected != nil {
				s.ack(m, redirected...)
			}
		}
	})
}

// Live call control moving a WebSocket call within its application (a relative URL,
// or its own scheme and host) sends session:redirect on the session it has, with the
// URL as hook and the call's details as data; the ack's verbs replace the remaining
// ones. No new connection, no second session:new.
func TestControlRedirectWithinWebSocketApp(t *testing.T) {
	// The hook is the URL as given (as jambonz sends it), without the fragment.
	for _, tc := range []struct {
		name, redirect, hook string
		absolute             bool
	}{
		{"relative", "/next#rc=2", "/next", false},
		{"same host", "/again", "/again", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, app := redirectingApp(t, []map[string]any{say("redirected"), hangupVerb})
			redirect := tc.redirect
			if tc.absolute {
				redirect, tc.hook = app+tc.redirect, app+tc.hook
			}
			o := baseOptions(t, app)
			o.IdleLimit = 20 * time.Second
			r := controlled(t, o, callctl.Control{Redirect: redirect})
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			if !slices.Equal(r.Verbs, []string{"say", "say", "hangup"}) {
				t.Errorf("verbs %v, want the ack's say and hangup after the first say", r.Verbs)
			}
			got := srv.find("session:redirect")
			if len(got) == 0 {
				t.Fatalf("the app got no session:redirect; timeline %v", kinds(r))
			}
			m := got[0]
			data, _ := m["data"].(map[string]any)
			if m["hook"] != tc.hook || m["call_sid"] != r.CallSid || data["call_sid"] != r.CallSid || m["msgid"] == "" {
				t.Errorf("session:redirect %v, want hook %q and the call's details", m, tc.hook)
			}
			timeline := strings.Join(kinds(r), ",")
			if n := srv.conns.Load(); n != 1 || strings.Count(timeline, "session:new") != 1 {
				t.Errorf("%d connections, timeline %v; want the one session kept", n, timeline)
			}
			if !slices.Contains(r.Hooks, tc.hook) {
				t.Errorf("hooks %v lack %q", r.Hooks, tc.hook)
			}
		})
	}
}

// A session:redirect that is never acked is alerted, and the call goes on with the
// verbs and session it had.
func TestControlRedirectWithinWebSocketAppUnacked(t *testing.T) {
	waitsOutATimeout(t)
	srv, app := redirectingApp(t, nil)
	o := baseOptions(t, app)
	o.IdleLimit = 20 * time.Second
	o.AckTimeout = time.Second // session:redirect waits it out
	r := controlled(t, o, callctl.Control{Redirect: "/next"}, callctl.Control{Hangup: true})
	if got := srv.find("session:redirect"); len(got) != 1 {
		t.Fatalf("the app got %d session:redirect, want 1", len(got))
	}
	if !hasAlert(r, callctl.AlertWebhookFailure) {
		t.Errorf("an unacked session:redirect must raise webhook-failure; alerts %+v", r.Alerts)
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAPIHangup, 200)
}
