package callctl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
)

// docs/compatibility.md §13: a child_call_hook makes the bridged leg a session of its
// own (place-outdial.js doAdulting): the hook comes as session:redirect with the
// leg's call info, an HTTP application then gets session:adulting POSTed to
// /adulting with the leg's and its parent's call info, and the hook's verbs run on
// the leg, its hooks and its final status carrying the leg's call_sid, its gather
// answered by the callee. The dial ends: its actionHook reports completed 200
// without a duration, and the call's own status hook never hears the leg complete
// from the call. The leg's timeline follows the call's.
func TestChildCallHookAdultsTheLeg(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		got := map[string][]map[string]any{}
		var order []string
		control := make(chan callctl.Control, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			raw, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(raw, &body)
			mu.Lock()
			got[r.URL.Path] = append(got[r.URL.Path], body)
			order = append(order, r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/call":
				writeJSON(w, []any{map[string]any{"verb": "dial", "actionHook": "/dial-action",
					"target": []any{map[string]any{"type": "phone", "number": "+15550002222"}}}})
			case "/status":
				if body["parent_call_sid"] != nil && body["call_status"] == "in-progress" {
					control <- callctl.Control{ChildCallHook: "/child"}
				}
				w.WriteHeader(http.StatusNoContent)
			case "/child":
				writeJSON(w, []any{map[string]any{"verb": "gather", "input": []string{"digits"}, "actionHook": "/leg-gather", "timeout": 5, "numDigits": 1},
					map[string]any{"verb": "hangup"}})
			case "/dial-action":
				writeJSON(w, []any{map[string]any{"verb": "hangup"}})
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		})
		o := realTimeOptions(t, h, "/call")
		o.StatusHookURL = "/status"
		o.Control = control
		o.Script.Dials = []callctl.DialOutcome{{Duration: 60e9, DialExtras: callctl.DialExtras{Callee: []callctl.GatherInput{{Digits: "7", After: 1e9}}}}}
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		parent := r.CallSid
		if len(got["/child"]) != 1 || len(got["/adulting"]) != 1 || len(got["/leg-gather"]) != 1 || len(got["/dial-action"]) != 1 {
			t.Fatalf("requests %v", order)
		}
		leg, _ := got["/child"][0]["call_sid"].(string)
		if leg == "" || leg == parent || got["/child"][0]["parent_call_sid"] != parent {
			t.Fatalf("child_call_hook payload %v: want the leg's call info", got["/child"][0])
		}
		adulting := got["/adulting"][0]
		info, _ := adulting["parent_call_info"].(map[string]any)
		if adulting["call_sid"] != leg || adulting["call_status"] != "in-progress" || info["call_sid"] != parent {
			t.Errorf("session:adulting %v: want the leg's call info and parent_call_info", adulting)
		}
		if g := got["/leg-gather"][0]; g["call_sid"] != leg || g["digits"] != "7" {
			t.Errorf("the leg's gather hook %v: want the leg's call_sid and the callee's 7", g)
		}
		if a := got["/dial-action"][0]; a["call_sid"] != parent || a["dial_call_status"] != "completed" || a["dial_sip_status"] != float64(200) ||
			a["dial_call_sid"] != leg || a["duration"] != nil {
			t.Errorf("dial actionHook %v", a)
		}
		var legStatuses []string
		var legDuration any
		for _, s := range got["/status"] {
			if s["call_sid"] == leg {
				legStatuses = append(legStatuses, s["call_status"].(string))
				legDuration = s["duration"]
			}
		}
		if !slices.Equal(legStatuses, []string{"trying", "ringing", "in-progress", "completed"}) {
			t.Errorf("the leg's statuses %v", legStatuses)
		}
		if legDuration != float64(1) { // the gather's second, counted from the adulting: jambonz hung up
			t.Errorf("the leg's completed duration %v, want 1", legDuration)
		}
		if i, j := slices.Index(order, "/child"), slices.Index(order, "/adulting"); i < 0 || j < i {
			t.Errorf("requests %v: want /child before /adulting", order)
		}
		// The leg's session follows the call's end in the timeline, a call of its own.
		end := slices.IndexFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindCallEnd && e.CallSid == parent })
		legStart := slices.IndexFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindCallStart && e.CallSid == leg })
		legEnd := slices.IndexFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindCallEnd && e.CallSid == leg })
		if end < 0 || legStart <= end || legEnd <= legStart || r.Timeline[legEnd].Reason != callctl.ReasonAppHangup {
			t.Errorf("timeline: call.end %d, the leg's call.start %d and call.end %d", end, legStart, legEnd)
		}
		if r.Status != callctl.StatusCompleted || r.Reason != callctl.ReasonAppHangup {
			t.Errorf("call ended %s (%s)", r.Status, r.Reason)
		}
	})
}

// docs/compatibility.md §13: a WebSocket application's adulted leg gets a socket of
// its own, to the call's URL with /adulting appended, whose first message is
// session:adulting; no envelope on it carries a call_sid (jambonz's requestor takes
// it from session:new, which this socket never sends); the ack's verbs are ignored;
// the leg's hooks and its completed status come on it, and it is closed with 1000.
func TestChildCallHookAdultsTheLegOverWebSocket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		msgs := map[string][]map[string]any{} // by path
		control := make(chan callctl.Control, 1)
		ack := func(c *websocket.Conn, ctx context.Context, id string, verbs ...any) {
			b, _ := json.Marshal(map[string]any{"type": "ack", "msgid": id, "data": verbs})
			_ = c.Write(ctx, websocket.MessageText, b)
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
			if err != nil {
				return
			}
			defer c.CloseNow()
			for {
				_, raw, err := c.Read(r.Context())
				if err != nil {
					return
				}
				var m map[string]any
				_ = json.Unmarshal(raw, &m)
				mu.Lock()
				msgs[r.URL.Path] = append(msgs[r.URL.Path], m)
				mu.Unlock()
				id, _ := m["msgid"].(string)
				data, _ := m["data"].(map[string]any)
				switch {
				case m["type"] == "session:new":
					ack(c, r.Context(), id, map[string]any{"verb": "dial", "actionHook": "/dial-action",
						"target": []any{map[string]any{"type": "phone", "number": "+15550002222"}}})
				case m["type"] == "call:status" && data["parent_call_sid"] != nil && data["call_status"] == "in-progress":
					control <- callctl.Control{ChildCallHook: "/child"}
				case m["hook"] == "/child":
					ack(c, r.Context(), id, map[string]any{"verb": "gather", "input": []string{"digits"}, "actionHook": "/leg-gather", "timeout": 5, "numDigits": 1},
						map[string]any{"verb": "hangup"})
				case m["hook"] == "/dial-action":
					ack(c, r.Context(), id, map[string]any{"verb": "hangup"})
				case m["type"] == "session:adulting":
					ack(c, r.Context(), id, map[string]any{"verb": "say", "text": "ignored"})
				case id != "" && m["type"] != "call:status":
					ack(c, r.Context(), id)
				}
			}
		})
		o := realTimeOptions(t, h, "/ws/app")
		o.Control = control
		o.Script.Dials = []callctl.DialOutcome{{Duration: 60e9, DialExtras: callctl.DialExtras{Callee: []callctl.GatherInput{{Digits: "3"}}}}}
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		legMsgs := msgs["/ws/app/adulting"]
		if len(legMsgs) < 3 || legMsgs[0]["type"] != "session:adulting" {
			t.Fatalf("the leg's socket got %v, want session:adulting first", legMsgs)
		}
		first, _ := legMsgs[0]["data"].(map[string]any)
		leg, _ := first["call_sid"].(string)
		parentInfo, _ := first["parent_call_info"].(map[string]any)
		if leg == "" || leg == r.CallSid || parentInfo["call_sid"] != r.CallSid {
			t.Errorf("session:adulting data %v", first)
		}
		var types []string
		for _, m := range legMsgs {
			if _, has := m["call_sid"]; has {
				t.Errorf("an envelope on the leg's socket carries call_sid: %v", m)
			}
			types = append(types, m["type"].(string)+" "+fmt.Sprint(m["hook"]))
		}
		if want := []string{"session:adulting <nil>", "verb:hook /leg-gather", "call:status <nil>"}; !slices.Equal(types, want) {
			t.Errorf("the leg's socket got %q, want %q", types, want)
		}
		for _, e := range r.Timeline {
			if e.Kind == callctl.KindSpoken && e.Value == "ignored" {
				t.Errorf("the session:adulting ack's say ran: %v", e)
			}
			if e.Kind == callctl.KindWSClose && e.CallSid == leg && e.Code != 1000 {
				t.Errorf("the leg's socket closed with %d", e.Code)
			}
		}
		if !slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool { return w.Rule == callctl.CompatAdultingAckVerbs }) {
			t.Errorf("compat %v: want %s for the ack's verbs", r.Compat, callctl.CompatAdultingAckVerbs)
		}
		for _, m := range msgs["/ws/app"] {
			if d, _ := m["data"].(map[string]any); m["type"] == "call:status" && d["call_sid"] == leg && d["call_status"] == "completed" {
				t.Errorf("the call's socket heard the adulted leg complete: %v", m)
			}
		}
	})
}

// adultingWSApp is a WebSocket application that dials and, once the dialed leg is in
// progress, sends the redirect command data; it acks /child with a gather and a
// hangup for the leg and /dial-action with a hangup. It records the messages by path.
func adultingWSApp(data string) (http.Handler, func() map[string][]map[string]any) {
	var mu sync.Mutex
	msgs := map[string][]map[string]any{}
	ack := func(c *websocket.Conn, ctx context.Context, id string, verbs ...any) {
		b, _ := json.Marshal(map[string]any{"type": "ack", "msgid": id, "data": verbs})
		_ = c.Write(ctx, websocket.MessageText, b)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, raw, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			mu.Lock()
			msgs[r.URL.Path] = append(msgs[r.URL.Path], m)
			mu.Unlock()
			id, _ := m["msgid"].(string)
			d, _ := m["data"].(map[string]any)
			switch {
			case m["type"] == "session:new":
				ack(c, r.Context(), id, map[string]any{"verb": "dial", "actionHook": "/dial-action",
					"target": []any{map[string]any{"type": "phone", "number": "+15550002222"}}},
					map[string]any{"verb": "say", "text": "after the dial"})
			case m["type"] == "call:status" && d["parent_call_sid"] != nil && d["call_status"] == "in-progress":
				_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"type":"command","command":"redirect","data":`+data+`}`))
			case m["hook"] == "/child":
				ack(c, r.Context(), id, map[string]any{"verb": "gather", "input": []string{"digits"}, "actionHook": "/leg-gather", "timeout": 5, "numDigits": 1},
					map[string]any{"verb": "hangup"})
			case m["hook"] == "/dial-action":
				ack(c, r.Context(), id, map[string]any{"verb": "hangup"})
			case id != "" && m["type"] != "call:status":
				ack(c, r.Context(), id)
			}
		}
	})
	return h, func() map[string][]map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(msgs)
	}
}

// A redirect command with {child_call_hook} adults the bridged leg as the REST
// update does (lib/session/call-session.js _onCommand → _lccCallHook): the hook goes
// as session:redirect with the leg's call info, the leg gets its own socket
// (session:adulting) and runs the hook's verbs, and the dial ends.
func TestRedirectCommandChildCallHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, msgs := adultingWSApp(`{"child_call_hook":"/child"}`)
		o := realTimeOptions(t, h, "/ws/app")
		o.Script.Dials = []callctl.DialOutcome{{Duration: 60e9, DialExtras: callctl.DialExtras{Callee: []callctl.GatherInput{{Digits: "3"}}}}}
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		got := msgs()
		var child map[string]any
		for _, m := range got["/ws/app"] {
			if m["hook"] == "/child" {
				child = m
			}
		}
		if child == nil || child["type"] != "session:redirect" || child["data"].(map[string]any)["parent_call_sid"] != r.CallSid {
			t.Fatalf("no session:redirect to /child with the leg's call info: %v", got["/ws/app"])
		}
		leg := got["/ws/app/adulting"]
		if len(leg) < 2 || leg[0]["type"] != "session:adulting" || leg[1]["hook"] != "/leg-gather" {
			t.Fatalf("the leg's socket got %v, want session:adulting then its gather", leg)
		}
		if len(got["/ws/app"]) == 0 || !slices.ContainsFunc(got["/ws/app"], func(m map[string]any) bool { return m["hook"] == "/dial-action" }) {
			t.Errorf("the dial's actionHook was not requested: %v", got["/ws/app"])
		}
	})
}

// A redirect command with child_call and no child_call_hook: jambonz's _lccCallHook
// reads the dialed leg only in its child_call_hook branch, so it throws (sd is
// undefined) before applying anything, parent_call included; the dial goes on. A
// compat warning says so.
func TestRedirectCommandChildCallAppliesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, msgs := adultingWSApp(`{"parent_call":[{"verb":"hangup"}],"child_call":[{"verb":"hangup"}]}`)
		o := realTimeOptions(t, h, "/ws/app")
		o.Script.Dials = []callctl.DialOutcome{{Duration: 30e9}}
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if r.Reason != callctl.ReasonAppHangup || r.Duration < 30e9 {
			t.Fatalf("call ended %s after %v: want the dial to run its 30 s and its actionHook's hangup", r.Reason, r.Duration)
		}
		if !slices.ContainsFunc(msgs()["/ws/app"], func(m map[string]any) bool { return m["hook"] == "/dial-action" }) {
			t.Errorf("the dial's actionHook was not requested")
		}
		if len(msgs()["/ws/app/adulting"]) != 0 {
			t.Errorf("the leg adulted")
		}
		if !slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool {
			return w.Rule == callctl.CompatInvalidCommand && strings.Contains(w.Detail, "child_call without a child_call_hook")
		}) {
			t.Errorf("compat %v: want invalid-command naming child_call", r.Compat)
		}
	})
}

// An adulted leg is a call of its own (place-outdial.js doAdulting,
// lib/session/adulting-call-session.js): the call hung up through the API
// (ErrAPIHangup) ends alone, and the leg goes on with its verbs to its own end.
func TestAdultedLegOutlivesTheCallsHangup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		control := make(chan callctl.Control, 1)
		ctx, hangup := context.WithCancelCause(context.Background())
		defer hangup(nil)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			raw, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(raw, &body)
			mu.Lock()
			order = append(order, r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/call":
				writeJSON(w, []any{map[string]any{"verb": "dial", "actionHook": "/dial-action",
					"target": []any{map[string]any{"type": "phone", "number": "+15550002222"}}}})
			case "/status":
				if body["parent_call_sid"] != nil && body["call_status"] == "in-progress" {
					control <- callctl.Control{ChildCallHook: "/child"}
				}
				w.WriteHeader(http.StatusNoContent)
			case "/child":
				writeJSON(w, []any{map[string]any{"verb": "pause", "length": 2},
					map[string]any{"verb": "gather", "input": []string{"digits"}, "actionHook": "/leg-gather", "timeout": 5, "numDigits": 1},
					map[string]any{"verb": "hangup"}})
			case "/adulting":
				hangup(callctl.ErrAPIHangup) // the call, not its leg, hung up through the API
				w.WriteHeader(http.StatusNoContent)
			case "/dial-action":
				writeJSON(w, []any{map[string]any{"verb": "pause", "length": 60}})
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		})
		o := realTimeOptions(t, h, "/call")
		o.StatusHookURL = "/status"
		o.Control = control
		o.Script.Dials = []callctl.DialOutcome{{Duration: 60e9, DialExtras: callctl.DialExtras{Callee: []callctl.GatherInput{{Digits: "7", After: 1e9}}}}}
		r, err := callctl.Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if r.Reason != callctl.ReasonAPIHangup {
			t.Errorf("the call ended %s, want %s", r.Reason, callctl.ReasonAPIHangup)
		}
		if !slices.Contains(order, "/leg-gather") {
			t.Fatalf("requests %v: the leg's gather never ran after the call's hangup", order)
		}
		parent := r.CallSid
		legEnd := slices.IndexFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindCallEnd && e.CallSid != parent })
		if legEnd < 0 || r.Timeline[legEnd].Reason != callctl.ReasonAppHangup {
			t.Errorf("the leg's call.end %v, want its own hangup verb", r.Timeline[max(legEnd, 0)])
		}
	})
}

// A child_call_hook while no dial is bridged requests nothing and kills the verb
// playing (lib/session/call-session.js _lccCallHook: no sd, no tasks, so
// this.currentTask.kill); a compat warning says so.
func TestChildCallHookWithoutDialKillsTheVerb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var paths []string
		control := make(chan callctl.Control, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			switch r.URL.Path {
			case "/call":
				go func() { // during the pause
					time.Sleep(time.Second)
					control <- callctl.Control{ChildCallHook: "/child"}
				}()
				writeJSON(w, []any{map[string]any{"verb": "pause", "length": 30}, map[string]any{"verb": "hangup"}})
			default:
				w.WriteHeader(http.StatusNoContent)
			}
		})
		o := realTimeOptions(t, h, "/call")
		o.Control = control
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if slices.Contains(paths, "/child") {
			t.Errorf("requests %v: the child_call_hook was requested", paths)
		}
		if r.Reason != callctl.ReasonAppHangup || r.Duration >= 30e9 {
			t.Errorf("call ended %s after %v: want the pause killed and the hangup verb", r.Reason, r.Duration)
		}
		if !slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool { return w.Rule == callctl.CompatCommandWithoutEffect }) {
			t.Errorf("compat %v: want %s", r.Compat, callctl.CompatCommandWithoutEffect)
		}
	})
}
