package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// TestServeChildCallHookAdultsTheLeg: through a node's live call control, a
// child_call_hook makes the bridged leg of a dial a session of its own, as jambonz's
// doAdulting does, against an app on @jambonz/node-client-ws (ws_adulting.js): the
// hook comes on the call's socket as session:redirect with the leg's details; the
// leg's session opens a new socket to the call hook's URL with /adulting appended,
// whose first message is session:adulting (leg and parent_call_info); the verbs the
// hook returned run there (the ack's own verbs are ignored, as jambonz ignores them),
// the leg's gather hook and its completed status arrive on that socket with the leg's
// call_sid, and the socket is closed with 1000. The dial ends: its actionHook reports
// completed without a duration, and the call's socket never hears the leg complete.
func TestServeChildCallHookAdultsTheLeg(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_adulting.js")
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	sid := p.startCall(a, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL("ws", "/parent")}, "from": "+15550001111", "to": "+15550002222",
		"scenario": map[string]any{"caller": map[string]any{"dials": []any{map[string]any{
			"duration": "10m", "callee": []any{map[string]any{"digits": "5"}}}}}},
	}))
	// Once the leg answered (its in-progress reached the app), move it.
	if _, ok := app.waitMatch("parent:call:status", func(e appEvent) bool {
		return e.str("parent_call_sid") == sid && e.str("call_status") == "in-progress"
	}, appEventTimeout); !ok {
		t.Fatalf("the leg's statuses never reached the app: %v", app.Events())
	}
	if code, raw := p.do(http.MethodPut, "/v1/Accounts/"+a.AccountSid+"/Calls/"+sid, a.APIToken,
		map[string]any{"child_call_hook": "/child"}, nil); code != http.StatusNoContent {
		t.Fatalf("child_call_hook: %d %s", code, raw)
	}
	call := p.waitCall(a, sid)
	if _, ok := app.waitEvent("adult:close", appEventTimeout); !ok {
		t.Fatalf("the leg's socket never closed: %v", app.Events())
	}

	child, ok := app.waitEvent("parent:child", 0)
	leg := child.str("call_sid")
	if !ok || leg == "" || leg == sid || child.str("parent_call_sid") != sid {
		t.Fatalf("child_call_hook on the call's socket: %v, want the leg's details", child)
	}
	if s, _ := app.waitEvent("adult:session", 0); s.str("call_sid") != leg || s.str("parent_call_sid") != sid || s.str("direction") != "outbound" {
		t.Errorf("session:adulting %v: want the leg's details and its parent's", s)
	}
	if g, _ := app.waitEvent("adult:leg-gather", 0); g.str("call_sid") != leg || g.str("digits") != "5" {
		t.Errorf("the leg's gather hook %v", g)
	}
	var legStatuses []string
	for _, e := range app.Named("adult:call:status") {
		legStatuses = append(legStatuses, e.str("call_status"))
		if e.str("call_sid") != leg {
			t.Errorf("status on the leg's socket %v: want the leg's call_sid", e)
		}
	}
	if !slices.Equal(legStatuses, []string{"completed"}) {
		t.Errorf("the leg's socket got statuses %v, want its completed", legStatuses)
	}
	if c, _ := app.waitEvent("adult:close", 0); c.num("code") != 1000 {
		t.Errorf("the leg's socket closed with %v, want 1000", c["code"])
	}
	for _, e := range app.Named("parent:call:status") {
		if e.str("call_sid") == leg && e.str("call_status") == "completed" {
			t.Errorf("the call's socket heard the adulted leg complete: %v", e)
		}
	}
	action, _ := app.waitEvent("parent:dial-action", 0)
	if _, has := action["duration"]; has || action.str("dial_call_status") != "completed" || action.num("dial_sip_status") != 200 ||
		action.str("dial_call_sid") != leg {
		t.Errorf("dial actionHook %v", action)
	}
	if call.CallStatus != "completed" || call.Reason != "hangup-verb" {
		t.Errorf("call %s (%s)", call.CallStatus, call.Reason)
	}
	// The leg's session is in the call's record, under the leg's call_sid: what the
	// hook returned ran; what the session:adulting ack carried did not.
	var said []string
	for _, raw := range call.Timeline {
		var e map[string]any
		_ = json.Unmarshal(raw, &e)
		if e["kind"] == "agent.spoke" && e["call_sid"] == leg {
			said = append(said, e["text"].(string))
		}
	}
	if !slices.Equal(said, []string{"You are on your own now."}) {
		t.Errorf("the leg said %q", said)
	}
}
