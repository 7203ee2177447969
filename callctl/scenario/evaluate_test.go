package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// evaluated is the call every Evaluate test looks at: an HTTP app whose gather got
// digit 1, answered slowly once, and raised one alert.
func evaluated() *callctl.Result {
	kinds := []callctl.Kind{callctl.KindCallStart, callctl.KindHookAttempt, callctl.KindVerbStart, callctl.KindVerbEnd,
		callctl.KindVerbStart, callctl.KindCallerInput, callctl.KindHookAttempt, callctl.KindAlert, callctl.KindVerbStart, callctl.KindCallEnd}
	r := &callctl.Result{Status: callctl.StatusCompleted, Reason: callctl.ReasonAppHangup, Verbs: []string{"say", "gather", "hangup"},
		Hooks: []string{"/call", "/gather"}, Alerts: []callctl.Alert{{Type: callctl.AlertWebhookFailure, Detail: "status hook failed"}}}
	for _, k := range kinds {
		e := callctl.Event{Kind: k}
		if k == callctl.KindAlert {
			e.AlertType, e.Detail = callctl.AlertWebhookFailure, "status hook failed"
		}
		r.Timeline = append(r.Timeline, e)
	}
	r.Requests = []callctl.Request{
		{Transport: "http", Hook: "/call", Method: "POST", Payload: map[string]any{"from": "+1555", "sip_status": 100},
			Answered: true, AnswerTime: 20 * time.Millisecond, Event: 1, HookIndex: 0},
		{Transport: "http", Hook: "/gather", Method: "POST", Payload: map[string]any{"reason": "dtmfDetected", "digits": "1",
			"speech": map[string]any{"alternatives": []any{map[string]any{"transcript": "hi", "confidence": 0.92}}}},
			Answered: true, AnswerTime: 900 * time.Millisecond, Event: 6, HookIndex: 1},
		{Transport: "websocket", Type: "call:status", Payload: map[string]any{"call_status": "completed"}, Event: 8, HookIndex: -1},
	}
	return r
}

func ms(n int) scenario.Duration { return scenario.Duration(time.Duration(n) * time.Millisecond) }

// Each expectation, holding and not: a failure names the expectation (its message
// starts with it) and the timeline line it concerns.
func TestEvaluate(t *testing.T) {
	type failure struct {
		expectation, contains string
		event                 int
	}
	for _, tc := range []struct {
		name   string
		expect scenario.Expectations
		want   []failure
	}{
		{"nothing expected", scenario.Expectations{}, nil},
		{"verbs hold", scenario.Expectations{Verbs: []string{"say", "gather", "hangup"}}, nil},
		{"verbs differ at the second", scenario.Expectations{Verbs: []string{"say", "pause", "hangup"}},
			[]failure{{"verbs", "got [say gather hangup], want [say pause hangup]", 4}}},
		{"verbs missing at the end", scenario.Expectations{Verbs: []string{"say", "gather", "hangup", "say"}},
			[]failure{{"verbs", "want [say gather hangup say]", 9}}},
		{"hooks in order", scenario.Expectations{Hooks: []string{"/call", "/gather"}}, nil},
		{"hooks out of order", scenario.Expectations{Hooks: []string{"/gather", "/call"}}, []failure{{"hooks", "in this order", 9}}},
		{"hooks exactly", scenario.Expectations{HooksExact: []string{"/call", "/gather"}}, nil},
		{"hooks exactly: one more", scenario.Expectations{HooksExact: []string{"/call"}}, []failure{{"hooks_exact", "want exactly [/call]", 6}}},
		{"hooks exactly: one less", scenario.Expectations{HooksExact: []string{"/call", "/gather", "/gather"}}, []failure{{"hooks_exact", "got [/call /gather]", 9}}},
		{"hook counts hold", scenario.Expectations{HookCounts: map[string]int{"/gather": 1, "/status": 0}}, nil},
		{"hook counts: too many, too few", scenario.Expectations{HookCounts: map[string]int{"/call": 0, "/status": 2}}, []failure{
			{"hook_counts", "/call requested 1 time(s), want 0", 1}, {"hook_counts", "/status requested 0 time(s), want 2", 9}}},
		{"status and reason", scenario.Expectations{Status: callctl.StatusFailed, Reason: callctl.ReasonCallerHangup}, []failure{
			{"status", "got completed (hangup-verb), want failed", 9}, {"reason", "got hangup-verb, want caller-hangup", 9}}},
		{"alerts raised", scenario.Expectations{Alerts: []callctl.AlertType{callctl.AlertWebhookFailure}}, nil},
		{"alert not raised", scenario.Expectations{Alerts: []callctl.AlertType{callctl.AlertInvalidAppPayload}}, []failure{{"alerts", "invalid-app-payload was not raised", 9}}},
		{"no alerts hold", scenario.Expectations{NoAlerts: []callctl.AlertType{callctl.AlertInvalidAppPayload}}, nil},
		{"an alert that must not be raised", scenario.Expectations{NoAlerts: []callctl.AlertType{callctl.AlertWebhookFailure}},
			[]failure{{"no_alerts", "webhook-failure was raised: status hook failed", 7}}},
		{"received: payload fields", scenario.Expectations{Received: []scenario.Received{{Hook: "/gather", Method: "POST",
			Payload: map[string]any{"digits": "1", "speech.alternatives[0].transcript": "hi", "speech.alternatives[0].confidence": 0.92, "missing": nil}},
			{Hook: "/call", Payload: map[string]any{"sip_status": uint64(100)}}}}, nil},
		{"received: a field differs", scenario.Expectations{Received: []scenario.Received{{Hook: "/gather", Payload: map[string]any{"digits": "2"}}}},
			[]failure{{"received[0]", `the 1st /gather: payload digits is "1", want "2"`, 6}}},
		{"received: a field is absent", scenario.Expectations{Received: []scenario.Received{{Hook: "/call", Payload: map[string]any{"to": "+1666"}}}},
			[]failure{{"received[0]", `payload to is absent, want "+1666"`, 1}}},
		{"received: the method", scenario.Expectations{Received: []scenario.Received{{Hook: "/gather", Method: "GET"}}},
			[]failure{{"received[0]", "method POST, want GET", 6}}},
		{"received: a message type", scenario.Expectations{Received: []scenario.Received{{Type: "call:status", Payload: map[string]any{"call_status": "completed"}}}}, nil},
		{"received: the method of a message", scenario.Expectations{Received: []scenario.Received{{Type: "call:status", Method: "POST"}}},
			[]failure{{"received[0]", "method none (a WebSocket message), want POST", 8}}},
		{"received: never sent", scenario.Expectations{Received: []scenario.Received{{Hook: "/gather", Nth: 2}}},
			[]failure{{"received[0]", "the app received 1 /gather request(s), want at least 2", 9}}},
		{"received: answered in time", scenario.Expectations{Received: []scenario.Received{{Hook: "/call", AnsweredWithin: ms(50)}}}, nil},
		{"received: answered late", scenario.Expectations{Received: []scenario.Received{{Hook: "/gather", AnsweredWithin: ms(500)}}},
			[]failure{{"received[0]", "answered in 900ms, want within 500ms", 6}}},
		{"received: not answered", scenario.Expectations{Received: []scenario.Received{{Type: "call:status", AnsweredWithin: ms(500)}}},
			[]failure{{"received[0]", "not answered", 8}}},
		{"every answer in time", scenario.Expectations{MaxAnswerTime: ms(1000)}, nil},
		{"an answer too slow", scenario.Expectations{MaxAnswerTime: ms(100)}, []failure{{"max_answer_time", "POST /gather answered in 900ms, want within 100ms", 6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.expect.Evaluate(evaluated())
			if len(got) != len(tc.want) {
				t.Fatalf("failures %+v, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Expectation != w.expectation || !strings.HasPrefix(g.Message, w.expectation+": ") || !strings.Contains(g.Message, w.contains) || g.Event != w.event {
					t.Errorf("failure %d: %+v, want %s at line %d containing %q", i, g, w.expectation, w.event, w.contains)
				}
			}
			if msgs := tc.expect.Check(evaluated()); len(msgs) != len(got) {
				t.Errorf("Check gives %d messages, Evaluate %d failures", len(msgs), len(got))
			}
			if tc.expect.Set() != (tc.name != "nothing expected") {
				t.Errorf("Set() = %v", tc.expect.Set())
			}
		})
	}
}
