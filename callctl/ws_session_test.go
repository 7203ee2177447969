package callctl_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
)

// docs/call-control.md §4: one connection per call, subprotocol ws.jambonz.org, the
// envelope keys, and verb:hook carrying its hook, without its retry fragment; call:status
// is fire and forget (never acked here).
func TestWSEnvelopeAndSubprotocol(t *testing.T) {
	var proto string
	srv, url := newWS(t, func(s *wsSession) {
		proto = s.conn.Subprotocol()
		// The hook's retry fragment is ours: the app sees "/digits" (docs/call-control.md §1).
		s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/digits#rc=2&rp=ct", "input": []string{"digits"}, "finishOnKey": "#"}, hangupVerb)
		s.ack(s.next("verb:hook"))
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.Gathers = []callctl.GatherInput{{Digits: "42#"}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if proto != "ws.jambonz.org" {
		t.Fatalf("subprotocol %q", proto)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
	sn := srv.find("session:new")[0]
	if sn["call_sid"] != r.CallSid || sn["msgid"] == "" || sn["hook"] != nil {
		t.Fatalf("session:new envelope %v", sn)
	}
	data := sn["data"].(map[string]any)
	// An inbound call's session:new carries the INVITE and the call's properties
	// as jambonz's CallInfo holds them (lib/middleware.js): local_sip_address, not
	// fs_sip_address; no caller_id.
	for _, k := range []string{"call_sid", "direction", "from", "to", "call_id", "sbc_callid", "sip_status", "sip_reason",
		"call_status", "account_sid", "trace_id", "application_sid", "local_sip_address", "caller_name", "has_recording",
		"service_provider_sid", "defaults", "sip", "originating_sip_ip"} {
		if _, ok := data[k]; !ok {
			t.Errorf("session:new data lacks %s", k)
		}
	}
	for _, k := range []string{"caller_id", "fs_sip_address"} {
		if _, ok := data[k]; ok {
			t.Errorf("session:new data has %s", k)
		}
	}
	vh := srv.find("verb:hook")[0]
	if vh["hook"] != "/digits" || vh["data"].(map[string]any)["digits"] != "42" || vh["data"].(map[string]any)["reason"] != "dtmfDetected" {
		t.Fatalf("verb:hook %v", vh)
	}
	// trying once the call has its verbs (lib/session/inbound-call-session.js), then
	// in-progress and completed.
	if got := srv.messages(); !slices.Equal(got, []string{"session:new", "call:status", "call:status", "verb:hook", "call:status"}) {
		t.Fatalf("messages %v", got)
	}
	if first := srv.find("call:status")[0]["data"].(map[string]any); first["call_status"] != "trying" {
		t.Fatalf("first call:status %v", first)
	}
	if last := srv.find("call:status")[2]["data"].(map[string]any); last["call_status"] != "completed" {
		t.Fatalf("final call:status %v", last)
	}
}

// docs/call-control.md §4, §6: session:new never acked: the call fails after the ack
// timeout and the node closes with 1001.
func TestWSSessionNewNeverAcked(t *testing.T) {
	closeCode := make(chan websocket.StatusCode, 1)
	_, url := newWS(t, func(s *wsSession) {
		s.next("session:new")
		_, _, err := s.conn.Read(s.ctx)
		closeCode <- websocket.CloseStatus(err)
	})
	o := baseOptions(t, url)
	o.AckTimeout = 100 * time.Millisecond
	r := run(t, o)
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonSessionFailed, 480)
	if !hasAlert(r, callctl.AlertWebhookFailure) {
		t.Fatal("no webhook-failure alert")
	}
	if code := <-closeCode; code != 1001 {
		t.Fatalf("node closed with %d, want 1001", code)
	}
	if got := kinds(r, callctl.KindWSClose); !slices.Equal(got, []string{"ws.close 1001"}) {
		t.Fatalf("closes %v", got)
	}
}

// docs/call-control.md §4: a verb:hook never acked times out (after a second;
// session:new's ack comes well within it); it is not re-sent; the call goes on with the
// verbs it has.
func TestWSVerbHookNeverAcked(t *testing.T) {
	waitsOutATimeout(t)
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("still here"), hangupVerb)
		s.drain()
	})
	o := baseOptions(t, url)
	o.AckTimeout = time.Second
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"gather", "say", "hangup"}) {
		t.Fatalf("verbs %v", r.Verbs)
	}
	if len(srv.find("verb:hook")) != 1 {
		t.Fatalf("verb:hook sent %d times, want once", len(srv.find("verb:hook")))
	}
	if !hasAlert(r, callctl.AlertWebhookFailure) {
		t.Fatal("no webhook-failure alert for the timeout")
	}
}

// docs/call-control.md §4: invalid input from the app raises invalid-app-payload and is
// answered with jambonz:error {"msg":"InvalidMessage"}, quoting a text message it
// could not use (content); the session goes on.
func TestWSInvalidInputSessionGoesOn(t *testing.T) {
	cases := map[string]func(s *wsSession){
		"invalid JSON":         func(s *wsSession) { s.raw(`{"type":"ack",`) },
		"not an object":        func(s *wsSession) { s.raw(`[1,2]`) },
		"unknown type":         func(s *wsSession) { s.send(map[string]any{"type": "hello"}) },
		"ack without msgid":    func(s *wsSession) { s.send(map[string]any{"type": "ack"}) },
		"command without name": func(s *wsSession) { s.send(map[string]any{"type": "command", "data": map[string]any{}}) },
		"command without data": func(s *wsSession) { s.send(map[string]any{"type": "command", "command": "redirect"}) },
		"binary frame":         func(s *wsSession) { _ = s.conn.Write(s.ctx, websocket.MessageBinary, []byte("{}")) },
		"oversized frame": func(s *wsSession) {
			s.raw(`{"type":"command","command":"dub","data":"` + strings.Repeat("x", 30000) + `"}`)
		},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			srv, url := newWS(t, func(s *wsSession) {
				m := s.next("session:new")
				bad(s)
				e := s.next("jambonz:error")
				if e == nil || e["data"].(map[string]any)["msg"] != "InvalidMessage" {
					t.Errorf("jambonz:error %v", e)
				} else if _, quoted := e["data"].(map[string]any)["content"]; quoted != !strings.Contains(name, "frame") {
					t.Errorf("jambonz:error %v: content quoted %v", e, quoted)
				}
				s.ack(m, say("fine"), hangupVerb)
				s.drain()
			})
			o := baseOptions(t, url)
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			if !hasAlert(r, callctl.AlertInvalidAppPayload) {
				t.Fatal("no invalid-app-payload alert")
			}
			if srv.conns.Load() != 1 {
				t.Fatal("the session did not go on over the same connection")
			}
		})
	}
}

// docs/call-control.md §4: the redirect command replaces the remaining verbs, or appends
// them with queueCommand; it may come while the call waits after its verbs ran out.
func TestWSRedirectCommand(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(map[bool]string{false: "replace", true: "queueCommand"}[queue], func(t *testing.T) {
			_, url := newWS(t, func(s *wsSession) {
				s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("original"))
				h := s.next("verb:hook")
				// The command arrives while the call waits for this ack.
				s.send(map[string]any{"type": "command", "command": "redirect", "queueCommand": queue,
					"data": []any{say("from the command"), hangupVerb}})
				s.ack(h)
				s.drain()
			})
			r := run(t, baseOptions(t, url))
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			want := []string{"gather", "say", "hangup"}
			if queue {
				want = []string{"gather", "say", "say", "hangup"}
			}
			if !slices.Equal(r.Verbs, want) {
				t.Fatalf("verbs %v, want %v", r.Verbs, want)
			}
		})
	}
}

// Any command an application sends before it acks session:new is lost, as in jambonz
// (its call session, which listens for commands, is made once the ack came): the call
// runs the ack's verbs, and a compat warning names the loss.
func TestWSCommandBeforeSessionNewAckIsLost(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(map[bool]string{false: "replace", true: "queueCommand"}[queue], func(t *testing.T) {
			_, url := newWS(t, func(s *wsSession) {
				m := s.next("session:new")
				// One connection keeps the order: the command is read before the ack.
				s.send(map[string]any{"type": "command", "command": "redirect", "queueCommand": queue,
					"data": []any{say("from the command"), hangupVerb}})
				s.send(map[string]any{"type": "command", "command": "call:status", "data": map[string]any{"call_status": "completed"}})
				s.ack(m, say("from the ack"), hangupVerb)
				s.drain()
			})
			r := run(t, baseOptions(t, url))
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			if !slices.Equal(r.Verbs, []string{"say", "hangup"}) || len(r.Compat) != 2 || r.Compat[0].Rule != callctl.CompatCommandBeforeAck {
				t.Fatalf("verbs %v, compat %v", r.Verbs, r.Compat)
			}
		})
	}
}

// Commands jambonz does not act on are ignored with no jambonz:error and no alert,
// each with a compat warning: an unknown command, a tag command (jambonz has none),
// a redirect whose verbs do not validate or whose data is a bare URL, call:status
// data as a bare string (what @jambonz/node-client-ws's injectCommand sends).
// stream:status, listen:status's alias, is accepted as it is.
func TestWSCommandsJambonzIgnores(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("more"), hangupVerb)
		for _, cmd := range []map[string]any{
			{"command": "launch", "data": 1},
			{"command": "tag", "data": map[string]any{"crm": "77"}},
			{"command": "redirect", "data": []any{map[string]any{"verb": "fly"}}},
			{"command": "redirect", "data": "/elsewhere"},
			{"command": "call:status", "data": "completed"},
			{"command": "stream:status", "data": map[string]any{"stream_status": "pause"}},
		} {
			cmd["type"] = "command"
			s.send(cmd)
		}
		s.ack(s.next("verb:hook"))
		s.drain()
	})
	r := run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if len(r.Alerts) != 0 || len(srv.find("jambonz:error")) != 0 || !slices.Equal(r.Verbs, []string{"gather", "say", "hangup"}) {
		t.Fatalf("alerts %v, jambonz:error %v, verbs %v", r.Alerts, srv.find("jambonz:error"), r.Verbs)
	}
	var rules []callctl.CompatRule
	for _, w := range r.Compat {
		rules = append(rules, w.Rule)
	}
	want := []callctl.CompatRule{callctl.CompatUnknownCommand, callctl.CompatTagCommand, callctl.CompatInvalidCommand,
		callctl.CompatRedirectCommandIgnored, callctl.CompatCommandWithoutEffect}
	if !slices.Equal(rules, want) {
		t.Fatalf("compat %v, want %v", r.Compat, want)
	}
	if cd := srv.find("verb:hook")[0]["data"].(map[string]any)["customerData"]; cd != nil {
		t.Fatalf("the tag command set customerData %v", cd)
	}
}

// A session:new ack whose verbs are invalid, or that has none, fails the initial
// session:new (lib/middleware.js): the call is rejected (invalid-app-payload, 480,
// as an HTTP app's would be), with no jambonz:error, and the node closes with 1001.
func TestWSInvalidSessionNewVerbsRejectCall(t *testing.T) {
	for name, ack := range map[string][]map[string]any{
		"invalid verbs": {{"verb": "fly"}, hangupVerb},
		"no verbs":      nil,
		"empty array":   {},
	} {
		t.Run(name, func(t *testing.T) {
			srv, url := newWS(t, func(s *wsSession) {
				s.ack(s.next("session:new"), ack...)
				s.drain()
			})
			r := run(t, baseOptions(t, url))
			wantEnd(t, r, callctl.StatusFailed, callctl.ReasonInvalidPayload, 480)
			if len(srv.find("jambonz:error")) != 0 || !hasAlert(r, callctl.AlertInvalidAppPayload) {
				t.Fatalf("jambonz:error %v, alerts %v", srv.find("jambonz:error"), r.Alerts)
			}
			var closed int
			for _, e := range r.Timeline {
				if e.Kind == callctl.KindWSClose {
					closed = e.Code
				}
			}
			if closed != 1001 {
				t.Fatalf("closed with %d, want 1001", closed)
			}
		})
	}
}

// A redirect verb to another WebSocket application opens a new socket whose first
// message is session:redirect (lib/tasks/redirect.js); when its ack has invalid
// verbs the redirect task fails and jambonz stops the call's tasks: the call ends,
// alerted.
func TestWSRedirectToAppWithInvalidAckEndsTheCall(t *testing.T) {
	srvB, urlB := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:redirect"), map[string]any{"verb": "fly"})
		s.drain()
	})
	_, urlA := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"), map[string]any{"verb": "redirect", "actionHook": urlB})
		s.drain()
	})
	r := run(t, baseOptions(t, urlA))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonRedirectFailed, 200)
	if !hasAlert(r, callctl.AlertInvalidAppPayload) || len(srvB.find("session:new")) != 0 {
		t.Fatalf("alerts %v, B got %v", r.Alerts, srvB.messages())
	}
}

// docs/call-control.md §4: a WebSocket call whose verbs ran out waits for a command.
func TestWSWaitsForCommandWhenVerbsRunOut(t *testing.T) {
	ranOut := make(chan struct{})
	_, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"))
		s.next("call:status")
		<-ranOut // the call's only verb ended: it waits now
		s.send(map[string]any{"type": "command", "command": "redirect", "data": []any{say("later"), hangupVerb}})
		s.drain()
	})
	o := baseOptions(t, url)
	o.IdleLimit = time.Minute // generous: the command comes as soon as the say ended
	var once sync.Once
	o.OnEvent = func(e callctl.Event) {
		if e.Kind == callctl.KindVerbEnd && e.Verb == "say" {
			once.Do(func() { close(ranOut) })
		}
	}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"say", "say", "hangup"}) {
		t.Fatalf("verbs %v", r.Verbs)
	}
}

// docs/call-control.md §4: the wait ends at the node's idle limit, or when the caller
// hangs up.
func TestWSWaitEndsAtIdleLimitOrCallerHangup(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"))
		s.drain()
	})
	o := baseOptions(t, url)
	o.IdleLimit = 100 * time.Millisecond
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonIdle, 200)

	o = baseOptions(t, url)
	o.Script.HangupAfter = 1500 * time.Millisecond // say "hello" lasts 0.5 s simulated
	r = run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonCallerHangup, 200)
}

// docs/call-control.md §4: close 1000 from the app is a graceful end: no reconnect, later
// notifications dropped, the call finishes the verbs it has. 1011 is a drop: the
// node reconnects, and an ack of the pending verb:hook on the new connection
// still counts.
func TestWSAppCloses1000vs1011(t *testing.T) {
	for _, code := range []websocket.StatusCode{1000, 1011} {
		t.Run(itoa(int(code)), func(t *testing.T) {
			var pending map[string]any
			srv, url := newWS(t, func(s *wsSession) {
				if s.n == 1 {
					s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("after the close"), hangupVerb)
					pending = s.next("verb:hook")
					_ = s.conn.Close(code, "bye")
					return
				}
				r := s.next("session:reconnect")
				// The pending verb:hook is acked on the new connection, even
				// before session:reconnect: both count.
				s.ack(pending, map[string]any{"verb": "pause", "length": 1}, hangupVerb)
				s.ack(r)
				s.drain()
			})
			o := baseOptions(t, url)
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			reconnects := len(kinds(r, callctl.KindWSReconnect))
			if code == 1000 {
				if !slices.Equal(r.Verbs, []string{"gather", "say", "hangup"}) {
					t.Fatalf("verbs %v", r.Verbs)
				}
				if reconnects != 0 || srv.conns.Load() != 1 {
					t.Fatalf("graceful close reconnected (%d)", reconnects)
				}
				if n := len(srv.find("call:status")); n != 2 {
					t.Fatalf("%d call:status sent, want only the two before the close (trying, in-progress)", n)
				}
				if got := kinds(r, callctl.KindWSClose); !slices.Equal(got, []string{"ws.close 1000"}) {
					t.Fatalf("closes %v", got)
				}
				return
			}
			if reconnects != 1 || srv.conns.Load() != 2 {
				t.Fatalf("1011 gave %d reconnects over %d connections", reconnects, srv.conns.Load())
			}
			if !slices.Equal(r.Verbs, []string{"gather", "pause", "hangup"}) || !slices.Contains(kinds(r), "ws.close 1011") {
				t.Fatalf("verbs %v, timeline %v", r.Verbs, kinds(r))
			}
			if got := srv.messages(); !slices.Equal(got[:5], []string{"session:new", "call:status", "call:status", "verb:hook", "session:reconnect"}) {
				t.Fatalf("messages %v", got)
			}
		})
	}
}

// jambonz's _lccCallStatus: call:status {"call_status": "completed"} hangs up an
// answered call; on one not yet answered it does nothing, and no-answer rejects an
// inbound call with 503. Known commands with nothing to simulate are accepted, no
// alert.
func TestWSCallStatusCommand(t *testing.T) {
	t.Run("completed", func(t *testing.T) {
		_, url := newWS(t, func(s *wsSession) {
			s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("more"))
			s.send(map[string]any{"type": "command", "command": "mute:status", "data": "mute"})
			s.send(map[string]any{"type": "command", "command": "tts:flush"})
			s.ack(s.next("verb:hook"))
			s.send(map[string]any{"type": "command", "command": "call:status", "data": map[string]any{"call_status": "completed"}})
			s.drain()
		})
		r := run(t, baseOptions(t, url))
		wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
		if len(r.Alerts) != 0 || len(r.Compat) != 0 {
			t.Fatalf("alerts %v compat %v", r.Alerts, r.Compat)
		}
	})
	t.Run("unanswered", func(t *testing.T) {
		_, url := newWS(t, func(s *wsSession) {
			s.ack(s.next("session:new"), map[string]any{"verb": "pause", "length": 5})
			s.send(map[string]any{"type": "command", "command": "call:status", "data": map[string]any{"call_status": "completed"}})
			s.send(map[string]any{"type": "command", "command": "call:status", "data": map[string]any{"call_status": "no-answer"}})
			s.drain()
		})
		r := run(t, baseOptions(t, url))
		wantEnd(t, r, callctl.StatusNoAnswer, callctl.ReasonAppHangup, 503)
		if len(r.Compat) != 1 || r.Compat[0].Rule != callctl.CompatCommandWithoutEffect {
			t.Fatalf("compat %v", r.Compat)
		}
	})
}

// docs/call-control.md §4: a dial's confirm hook is a dial:confirm message that waits for
// its ack, with hook set; a binary frame while verbs run is still answered with
// jambonz:error.
func TestWSDialConfirm(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "dial", "confirmHook": "/confirm", "actionHook": "/dialed",
			"target": []any{map[string]any{"type": "user", "name": "bob"}}})
		c := s.next("dial:confirm")
		if c == nil || c["hook"] != "/confirm" {
			t.Errorf("dial:confirm %v", c)
		}
		s.ack(c)
		s.ack(s.next("verb:hook"), hangupVerb)
		s.drain()
	})
	r := run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if got := srv.find("verb:hook"); len(got) != 1 || got[0]["data"].(map[string]any)["dial_call_status"] != "completed" {
		t.Fatalf("dial actionHook %v", got)
	}
}

// docs/call-control.md §4: while a call waits after its verbs ran out, the app closing
// with 1000 ends it (app-closed); a call that ends normally is closed by the node with
// 1000.
func TestWSCloseCodesAtTheEnd(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"))
		s.next("call:status") // trying
		s.next("call:status") // in-progress: the say plays
		_ = s.conn.Close(websocket.StatusNormalClosure, "done")
	})
	r := run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppClosed, 200)

	codes := make(chan websocket.StatusCode, 1)
	_, url = newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hello"), hangupVerb)
		for {
			if _, _, err := s.conn.Read(s.ctx); err != nil {
				codes <- websocket.CloseStatus(err)
				return
			}
		}
	})
	r = run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if code := <-codes; code != websocket.StatusNormalClosure {
		t.Fatalf("node closed with %d, want 1000", code)
	}
}
