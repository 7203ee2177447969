package callctl_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Behaviours of jambonz's code a call follows (docs/compatibility.md), checked over
// HTTP; the WebSocket ones are in ws_session_test.go.

// earlyMedia plays before the answer (jambonz sends 183, no status change); an HTTP
// call whose verbs run out unanswered is then declined with 603.
func TestEarlyMediaDoesNotAnswer(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
		map[string]any{"verb": "say", "text": "the office is closed", "earlyMedia": true},
		map[string]any{"verb": "play", "url": "http://example.com/a.wav", "earlyMedia": true})})
	o := baseOptions(t, url+"/call")
	o.StatusHookURL = "/status"
	r := run(t, o)
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonVerbsExhausted, 603)
	if r.Answered || slices.Contains(kinds(r), "call.status in-progress") {
		t.Fatalf("answered: %v", kinds(r))
	}
	for _, q := range srv.all("/status") {
		if q.payload["call_status"] == "in-progress" {
			t.Fatalf("in-progress notified: %v", q.payload)
		}
	}
}

// An action hook carries verb_id when its verb has an id (Task.performAction).
func TestActionHookVerbID(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
		map[string]any{"verb": "gather", "id": "menu", "actionHook": "/g", "numDigits": 1},
		map[string]any{"verb": "gather", "actionHook": "/g2", "numDigits": 1})})
	o := baseOptions(t, url+"/call")
	o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}, {Digits: "2"}}
	run(t, o)
	if id := srv.last("/g").payload["verb_id"]; id != "menu" {
		t.Errorf("verb_id %v, want menu", id)
	}
	if _, ok := srv.last("/g2").payload["verb_id"]; ok {
		t.Errorf("verb_id sent for a verb without id: %v", srv.last("/g2").payload)
	}
}

// An inbound call hook carries the INVITE (sip, with the scenario's headers), the
// account's service provider, the application's speech defaults and env_vars
// (lib/middleware.js); X-Originating-Carrier names the trunk on every hook.
func TestInboundCallHookContext(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(map[string]any{"verb": "gather", "actionHook": "/g"}, hangupVerb)})
	o := baseOptions(t, url+"/call")
	o.Script.SIPHeaders = map[string]string{"X-Customer-Id": "c-42", "X-Originating-Carrier": "twilio"}
	o.Application = callctl.Application{Synthesizer: callctl.Speech{Vendor: "elevenlabs", Voice: "rachel"}, EnvVars: map[string]any{"GREETING": "hi"}}
	run(t, o)
	p := srv.last("/call").payload
	sip, _ := p["sip"].(map[string]any)
	headers, _ := sip["headers"].(map[string]any)
	defaults, _ := p["defaults"].(map[string]any)
	synth, _ := defaults["synthesizer"].(map[string]any)
	env, _ := p["env_vars"].(map[string]any)
	if headers["x-customer-id"] != "c-42" || sip["method"] != "INVITE" || p["originating_sip_trunk_name"] != "twilio" ||
		p["service_provider_sid"] == nil || p["local_sip_address"] == nil || synth["vendor"] != "elevenlabs" ||
		synth["voice"] != "rachel" || synth["language"] != "en-US" || env["GREETING"] != "hi" {
		t.Fatalf("call hook payload %v", p)
	}
	if g := srv.last("/g").payload; g["originating_sip_trunk_name"] != "twilio" || g["sip"] != nil || g["defaults"] != nil {
		t.Fatalf("action hook payload %v", g)
	}
}

// An outbound (REST) call notifies trying, then ringing (or early-media with a
// 183), then in-progress when the far end answers, and only then requests its call
// hook, which says in-progress (lib/http-routes/api/create-call.js,
// lib/tasks/rest_dial.js); a far end that never answers ends the call no-answer at the
// ring timeout with no call hook.
func TestOutboundCallAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   callctl.AnswerOutcome
		statuses []any
		hooked   bool
		status   callctl.Status
		sip      int
	}{
		{"answered", callctl.AnswerOutcome{After: 3 * time.Second}, []any{"trying", "ringing", "in-progress", "completed"}, true, callctl.StatusCompleted, 200},
		{"early media", callctl.AnswerOutcome{EarlyMedia: true}, []any{"trying", "early-media", "in-progress", "completed"}, true, callctl.StatusCompleted, 200},
		{"busy", callctl.AnswerOutcome{Status: callctl.StatusBusy}, []any{"trying", "ringing", "busy"}, false, callctl.StatusBusy, 486},
		{"no answer", callctl.AnswerOutcome{Status: callctl.StatusNoAnswer}, []any{"trying", "ringing", "no-answer"}, false, callctl.StatusNoAnswer, 487},
		{"rings past the timeout", callctl.AnswerOutcome{After: time.Hour}, []any{"trying", "ringing", "no-answer"}, false, callctl.StatusNoAnswer, 487},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(map[string]any{"verb": "say", "text": "hi"}, hangupVerb)})
			o := baseOptions(t, url+"/call")
			o.StatusHookURL = "/status"
			o.Call.Direction = "outbound"
			o.Script.Answer = tc.answer
			r := run(t, o)
			if r.Status != tc.status || r.SIPStatus != tc.sip {
				t.Fatalf("ended %s %d, want %s %d", r.Status, r.SIPStatus, tc.status, tc.sip)
			}
			var statuses []any
			for _, q := range srv.all("/status") {
				statuses = append(statuses, q.payload["call_status"])
			}
			if !slices.Equal(statuses, tc.statuses) {
				t.Errorf("statuses %v, want %v", statuses, tc.statuses)
			}
			hooks := srv.all("/call")
			if (len(hooks) == 1) != tc.hooked {
				t.Fatalf("call hook requested %d times", len(hooks))
			}
			if tc.hooked {
				p := hooks[0].payload
				if p["call_status"] != "in-progress" || p["sip_status"] != float64(200) || p["defaults"] == nil || p["sip"] != nil {
					t.Errorf("call hook payload %v", p)
				}
			}
		})
	}
}

// A WebSocket application's status notifications go to an http(s) status hook as
// webhooks; an HTTP application's ws(s) status hook gets none, with a warning.
func TestStatusHookTransports(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{})
	_, ws := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hi"), hangupVerb)
		s.drain()
	})
	o := baseOptions(t, ws)
	o.StatusHookURL = url + "/status"
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	var statuses []any
	for _, q := range srv.all("/status") {
		statuses = append(statuses, q.payload["call_status"])
	}
	if !slices.Equal(statuses, []any{"trying", "in-progress", "completed"}) || slices.Contains(kinds(r), "msg.sent call:status") {
		t.Errorf("statuses at the http status hook %v, timeline %v", statuses, kinds(r))
	}

	_, app := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(say("hi"), hangupVerb)})
	o = baseOptions(t, app+"/call")
	o.StatusHookURL = "ws://127.0.0.1:1/status"
	r = run(t, o)
	if len(r.Compat) != 1 || r.Compat[0].Rule != callctl.CompatStatusHookOverWebSocket {
		t.Errorf("compat %v", r.Compat)
	}
}

// The final status names who ended the call (call_termination_by): the caller's
// hangup, or jambonz's.
func TestCallTerminationBy(t *testing.T) {
	for _, tc := range []struct {
		hangupAfter time.Duration
		want        string
	}{{0, "jambonz"}, {time.Second, "caller"}} {
		srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(say("a long enough greeting to be cut"), hangupVerb)})
		o := baseOptions(t, url+"/call")
		o.StatusHookURL = "/status"
		o.Script.HangupAfter = tc.hangupAfter
		run(t, o)
		final := srv.last("/status").payload
		if final["call_status"] != "completed" || final["call_termination_by"] != tc.want {
			t.Errorf("final status %v, want call_termination_by %s", final, tc.want)
		}
	}
}
