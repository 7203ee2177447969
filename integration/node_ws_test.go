package integration

import (
	"testing"
	"time"
)

// appEventTimeout bounds waiting for an app to report something that happens after
// the call ended on the node (e.g. the socket's close reaching the app). Generous, for
// a loaded machine: the wait ends as soon as the event comes.
const appEventTimeout = time.Minute

// TestNodeWSGatherHookReply: an app written with @jambonz/node-client-ws answers
// session:new with say + gather; the caller keys a digit; the gather's actionHook
// arrives as verb:hook and the app replies (acks) with say + hangup.
func TestNodeWSGatherHookReply(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_gather.js")
	tl := simulateScenario(t, `
caller:
  gathers:
    - digits: "5"
expect:
  verbs: [say, gather, say, hangup]
  status: completed
`, "--from", "+15550001111", "--to", "+15550002222", app.URL("ws", "/app"))
	start := tl.one(t, "call.start")
	if start.str("from") != "+15550001111" || start.str("to") != "+15550002222" || start.str("direction") != "inbound" {
		t.Errorf("call.start = %v", start)
	}
	tl.inOrder(t,
		step("ws.open", "", ""),
		step("msg.sent", "type", "session:new"),
		step("msg.recv", "type", "ack"),
		step("verb.start", "verb", "say"),
		step("verb.start", "verb", "gather"),
		step("msg.sent", "type", "verb:hook"),
		step("msg.recv", "type", "ack"),
		step("verb.start", "verb", "say"),
		step("verb.start", "verb", "hangup"),
		step("call.end", "status", "completed"),
	)
	tl.wantVerbs(t, "say", "gather", "say", "hangup")
	// Every message that waits for an ack got one with the same msgid.
	ackWaiting := map[string]bool{"session:new": true, "verb:hook": true}
	for _, sent := range tl.kind("msg.sent") {
		if !ackWaiting[sent.str("type")] {
			continue
		}
		acked := false
		for _, recv := range tl.kind("msg.recv") {
			acked = acked || (recv.str("type") == "ack" && recv.str("msgid") == sent.str("msgid"))
		}
		if !acked {
			t.Errorf("%s msgid %q was never acked", sent.str("type"), sent.str("msgid"))
		}
	}
	if alerts := tl.kind("alert"); len(alerts) != 0 {
		t.Errorf("alerts: %v", alerts)
	}
	sum := tl.one(t, "summary")
	if sum.num("calls") != 1 || sum.num("completed") != 1 || sum.num("failed") != 0 || sum.num("expectations_failed") != 0 {
		t.Errorf("summary = %v", sum)
	}

	// What the SDK app saw.
	newEv, ok := app.waitEvent("session:new", appEventTimeout)
	if !ok {
		t.Fatal("app never got session:new")
	}
	if newEv.str("call_sid") != start.str("call_sid") || newEv.str("from") != "+15550001111" || newEv.str("to") != "+15550002222" {
		t.Errorf("app session:new = %v, want call_sid %s", newEv, start.str("call_sid"))
	}
	hook, ok := app.waitEvent("hook", appEventTimeout)
	if !ok {
		t.Fatal("app never got the gather's actionHook")
	}
	if hook.str("digits") != "5" || hook.str("reason") == "" {
		t.Errorf("actionHook data = %v, want digits 5 and a reason", hook)
	}
	// The node closes the socket with 1000 when the call ends.
	closed, ok := app.waitEvent("close", appEventTimeout)
	if !ok || closed.num("code") != 1000 {
		t.Errorf("app saw close %v, want code 1000", closed)
	}
	app.noJambonzErrors(t)
}

// TestNodeWSReconnect: the node drops the connection mid-call (with 1011, and
// abruptly without a close frame); it reconnects and sends session:reconnect, which the
// SDK hands to the app's session:reconnect handler; the call then finishes on the new
// connection, the gather's actionHook reaching the reconnected session.
func TestNodeWSReconnect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		closeCode int // 0: no close frame
		appSees   float64
	}{
		{"close-1011", 1011, 1011},
		{"abrupt", 0, 1006},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			app := startNodeApp(t, "ws_reconnect.js")
			// Message 1 is session:new, message 2 its ack: the drop comes while the
			// first say plays.
			tl := simulateScenario(t, `
caller:
  gathers:
    - digits: "7"
faults:
  - after_message: 2
    close_code: `+itoa(tc.closeCode)+`
`, app.URL("ws", "/app"))
			tl.inOrder(t,
				step("msg.sent", "type", "session:new"),
				step("msg.recv", "type", "ack"),
				step("ws.close", "", ""),
				step("ws.reconnect", "", ""),
				step("ws.open", "", ""),
				step("msg.sent", "type", "session:reconnect"),
				step("msg.recv", "type", "ack"),
				step("msg.sent", "type", "verb:hook"),
				step("msg.recv", "type", "ack"),
				step("verb.start", "verb", "hangup"),
				step("call.end", "status", "completed"),
			)
			if n := len(tl.kind("ws.open")); n != 2 {
				t.Errorf("%d ws.open lines, want 2 (first connection and the reconnect)", n)
			}
			tl.wantVerbs(t, "say", "gather", "say", "hangup")
			if n := len(tl.values("msg.sent", "type")); n == 0 {
				t.Error("no messages sent")
			}
			for _, a := range tl.kind("alert") {
				if a.str("type") == "webhook-connection-failure" {
					t.Errorf("reconnect succeeded but alert %v was raised", a)
				}
			}

			callSid := tl.one(t, "call.start").str("call_sid")
			rec, ok := app.waitEvent("session:reconnect", appEventTimeout)
			if !ok {
				t.Fatal("the app's session:reconnect handler never ran")
			}
			if rec.str("call_sid") != callSid || rec.str("from") == "" {
				t.Errorf("session:reconnect = %v, want call_sid %s and the session:new payload (from)", rec, callSid)
			}
			hook, ok := app.waitEvent("hook", appEventTimeout)
			if !ok {
				t.Fatal("app never got the gather's actionHook")
			}
			if hook.str("connection") != "reconnected" || hook.str("digits") != "7" {
				t.Errorf("actionHook = %v, want digits 7 on the reconnected session", hook)
			}
			var firstClose appEvent
			for _, c := range app.Named("close") {
				if c.str("connection") == "first" {
					firstClose = c
				}
			}
			if firstClose == nil || firstClose.num("code") != tc.appSees {
				t.Errorf("first connection closed with %v, want code %v", firstClose, tc.appSees)
			}
			if n := len(app.Named("session:new")); n != 1 {
				t.Errorf("app got %d session:new, want 1", n)
			}
		})
	}
}

// TestNodeWSRedirectQueueCommand: the app sends a redirect command with
// queueCommand: true (the SDK's send({execImmediate: false})) while verbs of the
// first document are still queued; the node appends the command's verbs instead of
// replacing the queue.
func TestNodeWSRedirectQueueCommand(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_redirect.js")
	tl := simulateScenario(t, `
caller:
  gathers:
    - digits: "1"
`, app.URL("ws", "/app"))
	tl.inOrder(t,
		step("msg.sent", "type", "verb:hook"),
		step("msg.recv", "type", "command"),
		step("msg.recv", "type", "ack"),
		step("call.end", "status", "completed"),
	)
	// say First, gather, say Second (kept: appended, not replaced), say Queued, hangup.
	tl.wantVerbs(t, "say", "gather", "say", "say", "hangup")
	for _, a := range tl.kind("alert") {
		t.Errorf("alert: %v", a)
	}
	if _, ok := app.waitEvent("command-sent", appEventTimeout); !ok {
		t.Error("app never sent the command")
	}
	app.noJambonzErrors(t)
}

// TestNodeWSReconnectBeforeSessionNewAck: the connection drops right after
// session:new went out, before its ack; the ack of session:reconnect stands in for it
// and the verbs the SDK app sends from its session:reconnect handler start the call.
func TestNodeWSReconnectBeforeSessionNewAck(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_reconnect.js", "RECONNECT_VERBS=1")
	tl := simulateScenario(t, `
faults:
  - after_message: 1
    close_code: 1011
`, app.URL("ws", "/app"))
	tl.inOrder(t,
		step("msg.sent", "type", "session:new"),
		step("ws.close", "", ""),
		step("ws.reconnect", "", ""),
		step("msg.sent", "type", "session:reconnect"),
		step("msg.recv", "type", "ack"),
		step("verb.start", "verb", "say"),
		step("verb.start", "verb", "hangup"),
		step("call.end", "status", "completed"),
	)
	// Only the reconnect handler's verbs ran: the say + gather the app sent for
	// session:new were never received.
	tl.wantVerbs(t, "say", "hangup")
	newMsgid := ""
	for _, m := range tl.kind("msg.sent") {
		if m.str("type") == "session:new" {
			newMsgid = m.str("msgid")
		}
	}
	for _, m := range tl.kind("msg.recv") {
		if m.str("type") == "ack" && m.str("msgid") == newMsgid {
			t.Errorf("session:new (msgid %s) was acked on the dropped connection: %v", newMsgid, m)
		}
	}
	if _, ok := app.waitEvent("session:reconnect", appEventTimeout); !ok {
		t.Error("the app's session:reconnect handler never ran")
	}
}
