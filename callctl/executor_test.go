package callctl_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/callctl"
)

// gather: digits, speech and timeout give jambonz's actionHook payloads.
func TestGatherPayloads(t *testing.T) {
	doc := verbsReply(
		map[string]any{"verb": "gather", "input": []string{"digits", "speech"}, "actionHook": "/g1", "timeout": 8, "finishOnKey": "#"},
		map[string]any{"verb": "gather", "input": []string{"speech"}, "actionHook": "/g2"},
		map[string]any{"verb": "gather", "actionHook": "/g3", "timeout": 8})
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": doc})
	o := baseOptions(t, url+"/call")
	o.Script.Gathers = []callctl.GatherInput{{Digits: "12#"}, {Speech: "talk to sales"}}
	r := run(t, o)
	if g := srv.last("/g1").payload; g["reason"] != "dtmfDetected" || g["digits"] != "12" { // finishOnKey is not a digit
		t.Fatalf("g1 %v", g)
	}
	g2 := srv.last("/g2").payload
	sp, _ := g2["speech"].(map[string]any)
	alts, _ := sp["alternatives"].([]any)
	if g2["reason"] != "speechDetected" || len(alts) != 1 || alts[0].(map[string]any)["transcript"] != "talk to sales" {
		t.Fatalf("g2 %v", g2)
	}
	if g := srv.last("/g3").payload; g["reason"] != "timeout" {
		t.Fatalf("g3 %v", g)
	}
	// 2 s input, 2 s input, then the 8 s timeout.
	if r.Duration < 12*time.Second {
		t.Fatalf("duration %v", r.Duration)
	}
}

// dial: each outcome of the script reaches the actionHook.
func TestDialOutcomes(t *testing.T) {
	dial := func(hook string) map[string]any {
		return map[string]any{"verb": "dial", "actionHook": hook, "timeLimit": 60,
			"target": []any{map[string]any{"type": "sip", "sipUri": "sip:bob@example.com"}}}
	}
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(dial("/d1"), dial("/d2"), dial("/d3"))})
	o := baseOptions(t, url+"/call")
	o.Script.Dials = []callctl.DialOutcome{{Status: callctl.StatusBusy}, {Duration: 10 * time.Minute}}
	run(t, o)
	if d := srv.last("/d1").payload; d["dial_call_status"] != "busy" || d["dial_sip_status"] != float64(486) {
		t.Fatalf("d1 %v", d)
	}
	if d := srv.last("/d2").payload; d["dial_call_status"] != "completed" || d["duration"] != float64(60) {
		t.Fatalf("d2 (timeLimit 60 caps 10 min) %v", d)
	}
	if d := srv.last("/d3").payload; d["dial_call_status"] != "completed" || d["dial_sip_status"] != float64(200) || d["dial_call_sid"] == "" {
		t.Fatalf("d3 %v", d)
	}
}

// tag: customerData rides on later hooks.
func TestTagCustomerData(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
		map[string]any{"verb": "tag", "data": map[string]any{"order": 42}},
		map[string]any{"verb": "redirect", "actionHook": "/next"})})
	run(t, baseOptions(t, url+"/call"))
	cd, _ := srv.last("/next").payload["customerData"].(map[string]any)
	if cd["order"] != float64(42) {
		t.Fatalf("customerData %v", srv.last("/next").payload)
	}
}

// sip:decline rejects an unanswered call with its status, as failed whatever the
// status (lib/tasks/sip_decline.js).
func TestSipDecline(t *testing.T) {
	_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(map[string]any{"verb": "sip:decline", "status": 486})})
	r := run(t, baseOptions(t, url+"/call"))
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonDeclined, 486)
}

// A 30-minute call simulates in milliseconds (run gives it 30 s of real time); the
// caller's hangup interrupts it.
func TestLongCallSimulatedAndCallerHangup(t *testing.T) {
	_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
		say("hi"), map[string]any{"verb": "pause", "length": 1800}, say("bye"), hangupVerb)})
	r := run(t, baseOptions(t, url+"/call"))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if r.Duration < 30*time.Minute {
		t.Fatalf("simulated %v", r.Duration)
	}
	o := baseOptions(t, url+"/call")
	o.Script.HangupAfter = 10 * time.Minute
	r = run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonCallerHangup, 200)
	if r.Duration < 10*time.Minute || r.Duration > 10*time.Minute+time.Second || !slices.Equal(r.Verbs, []string{"say", "pause"}) {
		t.Fatalf("duration %v verbs %v", r.Duration, r.Verbs)
	}
}

// Every verb of the set runs (media simulated) without failing the call.
func TestEveryVerbRuns(t *testing.T) {
	hook := "/h"
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
		map[string]any{"verb": "config", "notifyEvents": true},
		map[string]any{"verb": "alert", "message": "info=alert-internal"},
		map[string]any{"verb": "answer"},
		map[string]any{"verb": "play", "url": "https://example.com/a.mp3", "actionHook": hook},
		map[string]any{"verb": "dtmf", "dtmf": "123"},
		map[string]any{"verb": "dub", "action": "addTrack", "track": "music"},
		map[string]any{"verb": "conference", "name": "room", "statusHook": hook, "statusEvents": []string{"join", "leave"}, "actionHook": hook},
		map[string]any{"verb": "enqueue", "name": "q", "waitHook": hook, "actionHook": hook},
		map[string]any{"verb": "dequeue", "name": "q", "actionHook": hook, "timeout": 3},
		map[string]any{"verb": "leave"},
		map[string]any{"verb": "stream", "url": "wss://example.com/audio", "actionHook": hook, "maxLength": 5},
		map[string]any{"verb": "llm", "vendor": "ultravox", "auth": map[string]any{"apiKey": "k"}, "llmOptions": map[string]any{}, "actionHook": hook},
		map[string]any{"verb": "message", "to": "+1555", "from": "+1666", "text": "hi", "actionHook": hook},
		map[string]any{"verb": "sip:request", "method": "INFO", "actionHook": hook},
		map[string]any{"verb": "sip:refer", "referTo": "sip:x@example.com", "actionHook": hook},
		map[string]any{"verb": "tag", "data": map[string]any{"a": 1}},
		hangupVerb)})
	o := baseOptions(t, url+"/call")
	o.Script.Queues = []callctl.QueueOutcome{{DequeueAfter: 10 * time.Second}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	// The alert verb raises its application alert, and only it.
	if len(r.Verbs) != 17 || len(r.Alerts) != 1 || r.Alerts[0].Type != callctl.AlertApplication {
		t.Fatalf("verbs %v alerts %v", r.Verbs, r.Alerts)
	}
	hooks := 0
	for _, p := range srv.paths() {
		if p == hook {
			hooks++
		}
	}
	if hooks != 12 { // play, conference (join, leave, action), enqueue (wait, action), dequeue, listen, llm, message, sip:request, sip:refer
		t.Fatalf("%d hooks to %s", hooks, hook)
	}
}

// config notifyEvents: a WebSocket app gets verb:status for each verb.
func TestNotifyEventsVerbStatus(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "config", "notifyEvents": true},
			map[string]any{"verb": "say", "text": "x", "id": "greeting"}, hangupVerb)
		s.drain()
	})
	run(t, baseOptions(t, url))
	vs := srv.find("verb:status")
	if len(vs) != 5 { // config finished, say starting/finished, hangup starting/finished... (hangup ends the call)
		var got []any
		for _, m := range vs {
			got = append(got, m["data"])
		}
		t.Fatalf("verb:status %v", got)
	}
	if d := vs[1]["data"].(map[string]any); d["id"] != "greeting" || d["event"] != "starting" || d["name"] != "say" {
		t.Fatalf("verb:status %v", d)
	}
}

// A canceled context ends the call (canceled) without leaving goroutines; a say
// looping forever ends at the maximum length.
func TestCanceledAndMaxDuration(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		s.next("session:new") // never acked
		s.drain()
	})
	o := baseOptions(t, url)
	o.AckTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	before := goleak.IgnoreCurrent()
	r, err := callctl.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonCanceled, 487)
	if err := goleak.Find(before, goleak.IgnoreAnyFunction("net/http.(*conn).serve")); err != nil {
		t.Fatal(err)
	}

	_, hurl := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(map[string]any{"verb": "say", "text": "x", "loop": "forever"})})
	o = baseOptions(t, hurl+"/call")
	o.MaxDuration = 2 * time.Hour
	r = run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonMaxDuration, 200)
	if r.Duration < 2*time.Hour {
		t.Fatalf("duration %v", r.Duration)
	}
}

// A call stopped from outside (a node's API hang-up, a drain) while a hook is in
// flight ends with the cancel cause as its reason, in the Result and on the
// call.end line, and raises no alert: the application did not fail.
func TestStoppedCallTakesItsCauseAndRaisesNoAlert(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hangAt string // the hook that never answers
		status callctl.Status
		sip    int
	}{
		{"at the call hook", "/call", callctl.StatusFailed, 487},
		{"at an action hook", "/g", callctl.StatusCompleted, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hanging := make(chan struct{}, 1)
			routes := map[string]http.HandlerFunc{
				"/call": verbsReply(map[string]any{"verb": "gather", "actionHook": "/g"}, hangupVerb),
			}
			routes[tc.hangAt] = func(w http.ResponseWriter, r *http.Request) {
				hanging <- struct{}{}
				<-r.Context().Done()
			}
			_, url := newHTTP(t, routes)
			o := baseOptions(t, url+"/call#rc=3&rp=all")
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				<-hanging // the hook is in flight
				cancel(errors.New("api-hangup"))
			}()
			r, err := callctl.Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			wantEnd(t, r, tc.status, "api-hangup", tc.sip)
			if len(r.Alerts) != 0 {
				t.Fatalf("alerts %v", r.Alerts)
			}
			if last := r.Timeline[len(r.Timeline)-1]; last.Kind != callctl.KindCallEnd || last.Reason != "api-hangup" {
				t.Fatalf("last line %+v", last)
			}
		})
	}
}

// Speech reaches the application as jambonz's normalizeTranscription reports it:
// channel_tag 1, and vendor with the recognizer's name (the verb's, unless absent or
// "default"; then the session's, which config sets; then the application's) and its
// raw event. jambonz's public echo app says "provided by <vendor.name>".
func TestSpeechNamesTheRecognizer(t *testing.T) {
	doc := verbsReply(
		map[string]any{"verb": "gather", "input": []string{"speech"}, "actionHook": "/app-default",
			"recognizer": map[string]any{"vendor": "default", "language": "default"}},
		map[string]any{"verb": "gather", "input": []string{"speech"}, "actionHook": "/own",
			"recognizer": map[string]any{"vendor": "microsoft", "language": "de-DE"}},
		map[string]any{"verb": "config", "recognizer": map[string]any{"vendor": "deepgram", "language": "fr-FR"}},
		map[string]any{"verb": "gather", "input": []string{"speech"}, "actionHook": "/session"})
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": doc})
	o := baseOptions(t, url+"/call")
	o.Application.Recognizer = callctl.Speech{Vendor: "aws", Language: "en-GB"}
	o.Script.Gathers = []callctl.GatherInput{{Speech: "one"}, {Speech: "two"}, {Speech: "three"}}
	run(t, o)
	for _, want := range []struct{ hook, vendor, language string }{
		{"/app-default", "aws", "en-GB"}, {"/own", "microsoft", "de-DE"}, {"/session", "deepgram", "fr-FR"},
	} {
		sp, _ := srv.last(want.hook).payload["speech"].(map[string]any)
		vendor, _ := sp["vendor"].(map[string]any)
		evt, _ := vendor["evt"].(map[string]any)
		if vendor["name"] != want.vendor || sp["language_code"] != want.language || sp["channel_tag"] != float64(1) ||
			sp["is_final"] != true || evt["is_final"] != true {
			t.Errorf("%s speech %v, want vendor %s, language %s", want.hook, sp, want.vendor, want.language)
		}
	}
}

// A dial's dtmfHook is a verb:hook whose answer jambonz never reads (dial.js
// _onInfo): verbs answered there run nowhere, valid or not, with no alert; the
// developer gets an answer-ignored warning. A plain "OK" (what express's
// sendStatus(200) sends) is no warning at all.
func TestDtmfHookAnswerIsIgnored(t *testing.T) {
	dial := map[string]any{"verb": "dial", "dtmfCapture": []string{"*2", "*3"}, "dtmfHook": "/dtmf",
		"target": []any{map[string]any{"type": "phone", "number": "+15550100"}}}
	var n atomic.Int32
	dtmf := func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("OK"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","txt":"not a say"}]`))
	}
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(dial, map[string]any{"verb": "hangup"}), "/dtmf": dtmf})
	o := baseOptions(t, url+"/call")
	o.Script.Dials = []callctl.DialOutcome{{DialExtras: callctl.DialExtras{DTMF: []callctl.DialDTMF{
		{Digits: "*2", Leg: "caller"}, {Digits: "*3", Leg: "caller"}}}}}
	r := run(t, o)
	if n := len(srv.all("/dtmf")); n != 2 {
		t.Fatalf("%d dtmfHook requests, want 2", n)
	}
	var rules []callctl.CompatRule
	for _, w := range r.Compat {
		rules = append(rules, w.Rule)
	}
	if !slices.Equal(rules, []callctl.CompatRule{callctl.CompatAnswerIgnored}) || len(r.Alerts) != 0 || r.Reason != callctl.ReasonAppHangup {
		t.Errorf("compat %v, alerts %v, reason %s; want one answer-ignored, no alert, the hangup verb", rules, r.Alerts, r.Reason)
	}
}

// A verb property jambonz's task never reads (verbs.Ignored) is a compat warning
// naming it and the task's file; the verb runs as jambonz runs it.
func TestIgnoredVerbProperty(t *testing.T) {
	doc := verbsReply(
		map[string]any{"verb": "gather", "input": []string{"speech"}, "actionHook": "/g", "speechTimeout": 2, "timeout": 5},
		map[string]any{"verb": "hangup"})
	_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": doc, "/g": statusReply(http.StatusNoContent)})
	r := run(t, baseOptions(t, url+"/call"))
	if len(r.Compat) != 1 || r.Compat[0].Rule != callctl.CompatIgnoredProperty ||
		r.Compat[0].Detail != "gather property: jambonz never reads speechTimeout (lib/tasks/gather.js): it has no effect there" {
		t.Errorf("compat %+v, want one ignored-property naming speechTimeout", r.Compat)
	}
}

// listen: without maxLength the stream lasts as long as the call (listen.js awaits
// its end; the simulated socket never closes), so its actionHook never comes before
// the caller hangs up; with maxLength it ends then, and the actionHook comes.
func TestListenLastsAsLongAsTheCall(t *testing.T) {
	listen := func(extra map[string]any) map[string]any {
		v := map[string]any{"verb": "listen", "url": "wss://stream.example.com/audio", "actionHook": "/done"}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(listen(nil)), "/done": verbsReply(say("bye"))})
	o := baseOptions(t, url+"/call")
	o.Script.HangupAfter = 5 * time.Minute
	if r := run(t, o); r.Reason != callctl.ReasonCallerHangup || r.Duration != 5*time.Minute || len(srv.all("/done")) != 0 {
		t.Errorf("listen without maxLength: reason %s after %v, %d actionHook requests; want the caller's hangup at 5m, none", r.Reason, r.Duration, len(srv.all("/done")))
	}
	srv, url = newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(listen(map[string]any{"maxLength": 45})), "/done": verbsReply(hangupVerb)})
	o = baseOptions(t, url+"/call")
	o.Script.HangupAfter = 5 * time.Minute
	if r := run(t, o); r.Reason != callctl.ReasonAppHangup || r.Duration != 45*time.Second || len(srv.all("/done")) != 1 {
		t.Errorf("listen with maxLength 45: reason %s after %v, %d actionHook requests; want the actionHook's hangup at 45s", r.Reason, r.Duration, len(srv.all("/done")))
	}
}

// gather with timeout 0 has no timer (lib/tasks/gather.js: "timeout of zero means no
// timeout"): with a prompt before it, the call waits to its maximum length without
// the arithmetic overflowing into a past time. A timeout beyond Node's setTimeout
// range (2^31-1 ms) fires at once in jambonz, as Node clamps the delay to 1 ms; a
// compat warning says so. A huge pause is such a timer too (lib/tasks/pause.js).
func TestGatherExtremeTimeouts(t *testing.T) {
	t.Run("timeout 0 after a prompt", func(t *testing.T) {
		srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
			map[string]any{"verb": "gather", "actionHook": "/g", "timeout": 0,
				"say": map[string]any{"text": "press a key"}})})
		o := baseOptions(t, url+"/call")
		o.MaxDuration = time.Hour
		r := run(t, o)
		if r.Reason != callctl.ReasonMaxDuration || r.Duration != time.Hour {
			t.Fatalf("reason %s after %v, want %s after 1h", r.Reason, r.Duration, callctl.ReasonMaxDuration)
		}
		if len(srv.all("/g")) != 0 {
			t.Fatal("the gather's actionHook was requested: timeout 0 has no timer")
		}
	})
	for _, tc := range []struct {
		name string
		verb map[string]any
	}{
		{"gather timeout beyond setTimeout's range", map[string]any{"verb": "gather", "actionHook": "/g", "timeout": 1e12}},
		{"gather timeout of 1e300", map[string]any{"verb": "gather", "actionHook": "/g", "timeout": 1e300}},
		{"interDigitTimeout beyond setTimeout's range", map[string]any{"verb": "gather", "actionHook": "/g", "timeout": 0, "minDigits": 1, "interDigitTimeout": 3e6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(tc.verb)})
			o := baseOptions(t, url+"/call")
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			r := run(t, o)
			g := srv.last("/g").payload
			if g == nil {
				t.Fatalf("no actionHook; call ended %s after %v", r.Reason, r.Duration)
			}
			if r.Duration > time.Minute {
				t.Fatalf("the gather lasted %v: jambonz's timer fires at once", r.Duration)
			}
			if !hasCompat(r, "setTimeout") {
				t.Fatalf("no compat warning naming setTimeout: %v", kinds(r))
			}
		})
	}
	t.Run("play timeoutSecs of 1e300 s", func(t *testing.T) {
		_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
			map[string]any{"verb": "play", "url": "https://example.com/a.mp3", "timeoutSecs": 1e300}, map[string]any{"verb": "hangup"})})
		r := run(t, baseOptions(t, url+"/call"))
		if r.Reason != callctl.ReasonAppHangup || r.Duration > time.Minute || !hasCompat(r, "play timeoutSecs") {
			t.Fatalf("reason %s after %v, compat %v: want the hangup verb at once and a timer-overflow warning", r.Reason, r.Duration, r.Compat)
		}
	})
	t.Run("pause of 1e300 s", func(t *testing.T) {
		_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(
			map[string]any{"verb": "pause", "length": 1e300}, map[string]any{"verb": "hangup"})})
		r := run(t, baseOptions(t, url+"/call"))
		if r.Reason != callctl.ReasonAppHangup || r.Duration > time.Minute {
			t.Fatalf("reason %s after %v, want the hangup verb at once", r.Reason, r.Duration)
		}
	})
}

// hasCompat reports whether a compat warning's detail contains s.
func hasCompat(r *callctl.Result, s string) bool {
	return slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool { return strings.Contains(w.Detail, s) })
}

// A rest:dial verb among an application's verbs places no call and requests no
// call_hook: jambonz's task only drives a call the REST API created
// (lib/tasks/rest_dial.js; create-call.js emits its events), and as a verb it waits
// until the call ends. A compat warning says so.
func TestRestDialVerbPlacesNoCall(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(map[string]any{"verb": "rest:dial", "call_hook": "/c", "from": "+15550002222",
			"to": map[string]any{"type": "phone", "number": "+15550001111"}}, map[string]any{"verb": "hangup"}),
		"/c": verbsReply(map[string]any{"verb": "hangup"}),
	})
	o := baseOptions(t, url+"/call")
	o.Script.HangupAfter = 90 * time.Second
	r := run(t, o)
	// Nothing answered the call: the caller's hangup cancels it.
	wantEnd(t, r, callctl.StatusNoAnswer, callctl.ReasonCallerHangup, 487)
	if len(srv.all("/c")) != 0 {
		t.Errorf("the rest:dial's call_hook was requested: %v", srv.paths())
	}
	if !slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool { return w.Rule == callctl.CompatRestDialVerb }) {
		t.Errorf("compat %v: want %s", r.Compat, callctl.CompatRestDialVerb)
	}
}
