package callctl_test

import (
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// Result.Requests is what the application received, in order, whichever its
// transport: each request's payload, method, whether and how fast it was answered,
// the timeline line it starts at and its entry in Result.Hooks.
func TestResultRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		want []callctl.Request // Payload holds the keys checked
	}{{
		name: "HTTP",
		url:  func(t *testing.T) string { return serve(t, &exampleapp.HTTPApp{}, false) + "/call" },
		want: []callctl.Request{
			{Transport: "http", Hook: "/call", Method: "POST", Payload: map[string]any{"from": "+15551230000", "call_status": "trying"}},
			{Transport: "http", Hook: "/gather", Method: "POST", Payload: map[string]any{"digits": "1", "reason": "dtmfDetected"}},
		},
	}, {
		name: "WebSocket",
		url:  func(t *testing.T) string { return serve(t, &exampleapp.WSApp{}, true) + "/ws" },
		want: []callctl.Request{
			{Transport: "websocket", Type: "session:new", Hook: "/ws", Payload: map[string]any{"from": "+15551230000"}},
			{Transport: "websocket", Type: "call:status", Payload: map[string]any{"call_status": "trying"}},
			{Transport: "websocket", Type: "call:status", Payload: map[string]any{"call_status": "in-progress"}},
			{Transport: "websocket", Type: "verb:hook", Hook: "/gather", Payload: map[string]any{"digits": "1"}},
			{Transport: "websocket", Type: "call:status", Payload: map[string]any{"call_status": "completed"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t, tc.url(t))
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			r := run(t, o)
			if len(r.Requests) != len(tc.want) {
				t.Fatalf("%d requests, want %d: %+v", len(r.Requests), len(tc.want), r.Requests)
			}
			for i, want := range tc.want {
				got := r.Requests[i]
				if got.Transport != want.Transport || got.Type != want.Type || got.Hook != want.Hook || got.Method != want.Method {
					t.Errorf("request %d: %+v, want %+v", i, got, want)
				}
				for k, v := range want.Payload {
					if got.Payload[k] != v {
						t.Errorf("request %d: payload %s = %v, want %v", i, k, got.Payload[k], v)
					}
				}
				awaited := got.Type != "call:status"
				if got.Answered != awaited || awaited && got.AnswerTime <= 0 {
					t.Errorf("request %d answered %v in %v, want answered %v", i, got.Answered, got.AnswerTime, awaited)
				}
				e := r.Timeline[got.Event]
				if e.Kind != callctl.KindHookAttempt && (e.Kind != callctl.KindMsgSent || e.Type != got.Type) {
					t.Errorf("request %d starts at %+v", i, e)
				}
				if got.HookIndex >= 0 && r.Hooks[got.HookIndex] != got.Hook || (got.HookIndex < 0) != (got.Type == "call:status") {
					t.Errorf("request %d: hook index %d of %v", i, got.HookIndex, r.Hooks)
				}
			}
		})
	}
}
