package callctl_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
)

// docs/call-control.md §4, issue 13: the redirect verb's hook goes over the socket as
// session:redirect (as jambonz sends it, and as the SDK routes it to the hook's
// handler), never as verb:hook; its ack's verbs replace the remaining ones.
func TestWSRedirectVerbSendsSessionRedirect(t *testing.T) {
	hooks := make(chan map[string]any, 1)
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "redirect", "actionHook": "/next#rc=1"}, say("skipped"))
		m := s.next("session:redirect")
		hooks <- m
		s.ack(m, say("moved"), hangupVerb)
		s.drain()
	})
	r := run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	m := <-hooks
	if m == nil || m["hook"] != "/next" {
		t.Fatalf("session:redirect = %v, want hook /next (fragment cut)", m)
	}
	if d, _ := m["data"].(map[string]any); d["call_sid"] != r.CallSid {
		t.Errorf("session:redirect data = %v, want the call's fields", m["data"])
	}
	if n := len(srv.find("verb:hook")); n != 0 {
		t.Errorf("%d verb:hook sent for a redirect verb", n)
	}
	if !slices.Equal(r.Verbs, []string{"redirect", "say", "hangup"}) {
		t.Errorf("verbs %v", r.Verbs)
	}
}

// docs/call-control.md §4, issue 13: a redirect command may name its call hook as a
// string, {"call_hook": "<url>"}, the form the official SDK's injectCommand sends:
// relative to the application it moves the call within the session
// (session:redirect); absolute http(s) it moves the call to that application.
func TestWSRedirectCommandStringCallHook(t *testing.T) {
	httpHits := make(chan string, 1)
	httpURL := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpHits <- r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode([]any{say("over http"), hangupVerb})
	}), false)
	for _, tc := range []struct {
		name     string
		data     any
		wantVia  string // "session:redirect" or "http"
		wantHook string
	}{
		{"relative string", map[string]any{"call_hook": "/moved"}, "session:redirect", "/moved"},
		{"relative object", map[string]any{"call_hook": map[string]any{"url": "/moved"}}, "session:redirect", "/moved"},
		{"absolute http string", map[string]any{"call_hook": httpURL + "/elsewhere"}, "http", "/elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := newWS(t, func(s *wsSession) {
				s.ack(s.next("session:new"), map[string]any{"verb": "pause", "length": 1})
				s.send(map[string]any{"type": "command", "command": "redirect", "data": tc.data})
				if tc.wantVia == "session:redirect" {
					m := s.next("session:redirect")
					if m != nil {
						s.ack(m, say("moved"), hangupVerb)
					}
				}
				s.drain()
			})
			r := run(t, baseOptions(t, url))
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			if hasAlert(r, callctl.AlertInvalidAppPayload) || len(srv.find("jambonz:error")) != 0 {
				t.Fatalf("the command was refused: alerts %v", r.Alerts)
			}
			switch tc.wantVia {
			case "http":
				if got := <-httpHits; got != tc.wantHook {
					t.Errorf("HTTP app got %s, want %s", got, tc.wantHook)
				}
			default:
				ms := srv.find("session:redirect")
				if len(ms) != 1 || ms[0]["hook"] != tc.wantHook {
					t.Errorf("session:redirect sent %v, want one with hook %s", ms, tc.wantHook)
				}
			}
			if !strings.Contains(strings.Join(r.Verbs, " "), "hangup") {
				t.Errorf("verbs %v: the redirect's verbs never ran", r.Verbs)
			}
		})
	}
}

// Issue 13: a URL with user-info that an application names (a redirect command's
// call hook, a verb's hook) is refused with a clear alert, and its credentials
// appear nowhere: not in the alerts, the timeline or the logs.
func TestUserInfoFromTheAppIsNeverEchoed(t *testing.T) {
	var logs bytes.Buffer
	_, wsURL := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"))
		s.send(map[string]any{"type": "command", "command": "redirect", "data": map[string]any{"call_hook": "https://alice:hunter2@127.0.0.1/x"}})
		s.send(map[string]any{"type": "command", "command": "redirect", "data": []any{
			map[string]any{"verb": "gather", "actionHook": "//alice:hunter2@127.0.0.1/g"}, hangupVerb}})
		s.drain()
	})
	_, httpURL := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(map[string]any{"verb": "play", "url": "x", "actionHook": "http://alice:hunter2@127.0.0.1/a"}, hangupVerb),
	})
	for _, url := range []string{wsURL, httpURL + "/call"} {
		o := baseOptions(t, url)
		o.Logger = zerolog.New(&logs)
		r := run(t, o)
		wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
		if len(r.Alerts) == 0 || !strings.Contains(r.Alerts[0].Detail, "user-info") {
			t.Errorf("%s: alerts %v, want one saying the URL carries user-info", url, r.Alerts)
		}
		all, _ := json.Marshal(r)
		if strings.Contains(string(all), "hunter2") {
			t.Errorf("%s: the result echoes the password: %s", url, all)
		}
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Errorf("the logs echo the password:\n%s", logs.String())
	}
}

// docs/call-control.md §3–4, issue 13: a WebSocket message is what JSON.stringify
// writes: & < > and U+2028 go as they are, never as \u0026, \u003c, \u2028.
func TestWSMessagesAreJSONStringifyOutput(t *testing.T) {
	raw := make(chan string, 1)
	_, url := newWS(t, func(s *wsSession) {
		_, b, err := s.conn.Read(s.ctx)
		if err != nil {
			raw <- ""
			return
		}
		raw <- string(b)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		s.ack(m, hangupVerb)
		s.drain()
	})
	o := baseOptions(t, url)
	o.Call.From = "R&D <ops>\u2028"
	run(t, o)
	got := <-raw
	if !strings.Contains(got, `"from":"R&D <ops>`+"\u2028"+`"`) || strings.Contains(got, `\u00`) || strings.Contains(got, `\u2028`) {
		t.Fatalf("session:new sent as %s", got)
	}
}
