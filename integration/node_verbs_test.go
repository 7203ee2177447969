package integration

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The verbs whose hooks come from the far end, each against an app on
// @jambonz/node-client-ws (testdata/node/ws_verbs.js), with jambonz's payloads and
// order (the rows of docs/compatibility.md).

// hookData returns the data the app got for its n-th (from 1) request of hook.
func hookData(t *testing.T, app *nodeApp, hook string, n int) appEvent {
	t.Helper()
	var got []appEvent
	for _, e := range app.Events() {
		if e.str("event") == "hook" && e.str("hook") == hook {
			got = append(got, e)
		}
	}
	if len(got) < n {
		t.Fatalf("the app got %d %s hook(s), want at least %d; events %v", len(got), hook, n, app.Events())
	}
	return got[n-1]
}

// TestNodeVerbDial: the dialed leg's statuses reach the app with the leg's own
// call_sid (trying, ringing, in-progress, completed), the confirm hook comes as
// dial:confirm with the leg's details and its gather is answered by the callee, amd
// reports a machine, the caller's DTMF matches dtmfCapture for the dtmfHook, the
// callee's REFER goes to the referHook, and the actionHook reports the dial.
func TestNodeVerbDial(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	tl := simulateScenario(t, `
caller:
  dials:
    - amd: machine
      confirm: [{digits: "1"}]
      dtmf: [{digits: "*2", leg: caller, after: 3s}]
      duration: 20s
expect:
  verbs_in_order: [dial, hangup]
  received:
    - type: dial:confirm
      payload: {direction: outbound, call_status: in-progress}
    - type: verb:hook
      hook: /amd
      payload: {type: amd_machine_detected, reason: long greeting}
    - type: call:status
      nth: 4 # the call's trying and in-progress, the leg's trying, then its ringing
      payload: {call_status: ringing, direction: outbound}
`, app.URL("ws", "/dial"))
	confirm := tl.kind("msg.sent")
	_ = confirm
	var legStatuses []string
	callSid := tl.one(t, "call.start").str("call_sid")
	for _, e := range app.Named("call:status") {
		if e.str("parent_call_sid") == callSid {
			legStatuses = append(legStatuses, e.str("call_status"))
		}
	}
	want := []string{"trying", "ringing", "in-progress", "completed"}
	if len(legStatuses) != len(want) {
		t.Fatalf("the dialed leg's statuses %v, want %v", legStatuses, want)
	}
	for i := range want {
		if legStatuses[i] != want[i] {
			t.Fatalf("the dialed leg's statuses %v, want %v", legStatuses, want)
		}
	}
	gather := hookData(t, app, "/action", 1) // the confirm leg's gather, with the leg's call_sid
	if gather.str("digits") != "1" || gather.str("call_sid") == callSid || gather.str("parent_call_sid") != callSid {
		t.Errorf("confirm leg gather %v", gather)
	}
	if d := hookData(t, app, "/dtmf", 1); d.str("dtmf") != "*2" || d.str("call_sid") != callSid {
		t.Errorf("dtmfHook %v", d)
	}
	if d := hookData(t, app, "/amd", 2); d.str("type") != "amd_machine_stopped_speaking" {
		t.Errorf("second amd event %v", d)
	}
	action := hookData(t, app, "/action", 2)
	if action.str("dial_call_status") != "completed" || action.num("dial_sip_status") != 200 || action.num("duration") != 20 {
		t.Errorf("dial actionHook %v", action)
	}
}

// TestNodeVerbDialDeclined: the callee declines the call on the confirm leg (the
// confirm hook's verbs hang up). jambonz hangs the leg up itself and drops its
// listeners (place-outdial.js _executeApp, dial.js on decline): the leg gets no
// completed status, and the dial's actionHook reports the status the leg had,
// in-progress 200, without a duration.
func TestNodeVerbDialDeclined(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	tl := simulateScenario(t, `
expect:
  verbs: [dial, hangup]
  received:
    - type: dial:confirm
      payload: {direction: outbound, call_status: in-progress}
    - type: verb:hook
      hook: /action
      payload: {dial_call_status: in-progress, dial_sip_status: 200}
`, app.URL("ws", "/screen"))
	callSid := tl.one(t, "call.start").str("call_sid")
	var legStatuses []string
	for _, e := range app.Named("call:status") {
		if e.str("parent_call_sid") == callSid {
			legStatuses = append(legStatuses, e.str("call_status"))
		}
	}
	if got := join(legStatuses); got != "trying ringing in-progress" {
		t.Errorf("the declined leg's statuses %q, want %q", got, "trying ringing in-progress")
	}
	action := hookData(t, app, "/action", 1)
	if _, has := action["duration"]; has || action.str("dial_call_sid") == "" || action.str("call_sid") != callSid {
		t.Errorf("dial actionHook %v: want the caller's call_sid, dial_call_sid and no duration", action)
	}
}

// TestNodeVerbDialRefer: the callee sends a REFER: the referHook gets refer_details
// and its answer ends the dial.
func TestNodeVerbDialRefer(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  dials:
    - confirm: [{digits: "1"}]
      refer: {to: "sip:+15550003333@example.com", after: 5s}
`, app.URL("ws", "/dial"))
	r := hookData(t, app, "/refer", 1)
	details, _ := r["refer_details"].(map[string]any)
	if details["refer_to_user"] != "+15550003333" || details["sip_refer_to"] != "<sip:+15550003333@example.com>" ||
		details["referring_call_sid"] != r.str("call_sid") {
		t.Errorf("referHook %v", r)
	}
}

// TestNodeVerbConference: start, join, start-talking, leave, end at the statusHook
// (conference_sid conf:<account>:<name>), the enterHook, then the actionHook.
func TestNodeVerbConference(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  conferences:
    - events: [{event: start-talking, after: 2s}]
      duration: 10s
expect:
  verbs: [conference, hangup]
  hooks_exact: [/conference, /status, /enter, /status, /status, /status, /status, /action]
`, app.URL("ws", "/conference"))
	var events []string
	for _, e := range app.Named("hook") {
		if e.str("hook") == "/status" {
			events = append(events, e.str("data_event"))
		}
	}
	want := "start join start-talking leave end"
	if got := join(events); got != want {
		t.Errorf("statusHook events %q, want %q", got, want)
	}
	s := hookData(t, app, "/status", 2)
	if s.str("friendly_name") != "sales" || s.str("conference_sid") == "sales" || s.num("members") != 1 {
		t.Errorf("join event %v", s)
	}
}

// TestNodeVerbEnqueue: the waitHook is requested again and again (its say played in
// between, on the timeline but not among the call's verbs: jambonz plays it in a
// session of its own) until a partner dequeues the caller; the actionHook says
// bridged.
func TestNodeVerbEnqueue(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  queues: [{dequeue_after: 10s, position: 2, size: 3}]
expect:
  verbs: [enqueue, hangup]
  received:
    - hook: /wait
      nth: 3
      payload: {queue_position: 1, queue_size: 3}
    - hook: /action
      payload: {queue_result: bridged}
`, app.URL("ws", "/enqueue"))
	w := hookData(t, app, "/wait", 1)
	if w.str("queue_sid") == "" || w.str("call_sid") == "" || w["from"] != nil {
		t.Errorf("waitHook %v: want queue_sid and call_sid, and not the call's other fields", w)
	}
}

// TestNodeVerbEnqueueQueueStatus: the account's queue event hook gets queue:status
// as jambonz's performQueueWebhook sends it (enqueue.js): join with the queue's name
// and length and join_time, then leave, dequeued with the partner's call as
// dequeuer, or abandoned when the caller hangs up first; each with the caller's
// call fields, over HTTP though the app is on a WebSocket.
func TestNodeVerbEnqueueQueueStatus(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	hooks := newHookReceiver(t)
	events := func(run int) []map[string]any {
		var out []map[string]any
		for _, r := range hooks.requests(fmt.Sprintf("/queue-events/%d", run)) {
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Fatalf("queue:status body %s: %v", r.body, err)
			}
			out = append(out, m)
		}
		return out
	}
	tl := simulateScenario(t, `
queue_event_hook: `+hooks.URL+`/queue-events/1
caller:
  queues: [{dequeue_after: 10s, size: 3}]
expect:
  received:
    - hook: /action
      payload: {queue_result: bridged}
`, app.URL("ws", "/enqueue"))
	callSid := tl.one(t, "call.start").str("call_sid")
	got := events(1)
	if len(got) != 2 {
		t.Fatalf("queue:status %v, want join and leave", got)
	}
	join, leave := got[0], got[1]
	if join["event"] != "join" || join["queue"] != "support" || join["length"] != float64(3) || join["call_sid"] != callSid ||
		join["call_status"] != "in-progress" || join["join_time"] == nil {
		t.Errorf("join %v", join)
	}
	dequeuer, _ := leave["dequeuer"].(map[string]any)
	if leave["event"] != "leave" || leave["leave_reason"] != "dequeued" || leave["length"] != float64(2) ||
		leave["call_sid"] != callSid || leave["leave_time"] == nil || dequeuer["call_sid"] == nil || dequeuer["call_sid"] == callSid {
		t.Errorf("leave %v", leave)
	}

	simulateScenario(t, `
queue_event_hook: `+hooks.URL+`/queue-events/2
caller:
  hangup_after: 5s
`, app.URL("ws", "/enqueue"))
	got = events(2)
	if len(got) != 2 || got[1]["event"] != "leave" || got[1]["leave_reason"] != "abandoned" || got[1]["dequeuer"] != nil {
		t.Errorf("queue:status of a caller who hangs up in the queue %v, want join then leave abandoned", got)
	}
}

// TestNodeVerbDequeue: a member is found and bridged (complete); none times out.
func TestNodeVerbDequeue(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  dequeues: [{member: true, after: 2s, bridged: 15s}]
expect:
  received:
    - hook: /action
      payload: {dequeue_result: complete}
`, app.URL("ws", "/dequeue"))
	simulateScenario(t, `
expect:
  received:
    - hook: /action
      payload: {dequeue_result: timeout}
`, app.URL("ws", "/dequeue"))
}

// TestNodeVerbTranscribe: each thing the caller says reaches the transcriptionHook;
// the app's verbs end the transcription.
func TestNodeVerbTranscribe(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  speech:
    - speech: hello there
    - speech: goodbye
      after: 3s
expect:
  verbs: [transcribe, say, hangup]
  received:
    - hook: /transcript
      payload:
        speech.alternatives[0].transcript: hello there
        speech.is_final: true
`, app.URL("ws", "/transcribe"))
	if n := len(app.Named("hook")); n != 2 {
		t.Errorf("%d transcription hooks, want 2", n)
	}
}

// TestNodeVerbConfigBargeIn: config bargeIn hears the caller over the say; its
// actionHook's verbs replace the application.
func TestNodeVerbConfigBargeIn(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	simulateScenario(t, `
caller:
  speech: [{speech: operator please, after: 2s}]
expect:
  verbs: [config, say, say, hangup]
  received:
    - type: verb:hook
      hook: /bargein
      payload:
        reason: speechDetected
        speech.alternatives[0].transcript: operator please
`, app.URL("ws", "/bargein"))
}

// TestNodeVerbConfigAutoStreamTts: after config autoStreamTts every say streams
// (say.js exec): the stream opens once for both says (tts:streaming-event
// stream_open), the caller talking over the second one interrupts it
// (user_interruption, then the bargeIn hook), the killed say stops the stream
// (stream_closed), and the say the hook returns opens it again.
func TestNodeVerbConfigAutoStreamTts(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_verbs.js")
	tl := simulateScenario(t, `
caller:
  speech: [{speech: operator please, after: 3s}]
expect:
  verbs: [config, say, say, say, hangup]
  spoken: [Welcome to the agent, You interrupted me]
  received:
    - type: tts:streaming-event
      payload: {event_type: stream_open}
    - type: tts:streaming-event
      nth: 2
      payload: {event_type: user_interruption}
    - type: verb:hook
      hook: /bargein
      payload: {reason: speechDetected}
`, app.URL("ws", "/autostream"))
	var events []string
	for _, e := range app.Named("tts:streaming-event") {
		events = append(events, e.str("event_type"))
	}
	if got, want := join(events), "stream_open user_interruption stream_closed stream_open"; got != want {
		t.Errorf("tts:streaming-event %q, want %q", got, want)
	}
	tl.inOrder(t,
		step("agent.spoke", "text", "Welcome to the agent."),
		step("caller.input", "value", "operator please"),
		step("agent.spoke", "text", "You interrupted me."),
	)
}

// TestNodeVerbBots: dialogflow, lex and rasa run the scenario's bot: its events at
// the eventHook with the payloads jambonz's tasks pass on (dialogflow: the final
// transcription, then the intent, each the Dialogflow ES response an app reads:
// recognition_result.transcript, query_result.intent.display_name and
// fulfillment_text; lex: response-text's messages; rasa: the bot's messages), the
// result at the actionHook.
func TestNodeVerbBots(t *testing.T) {
	t.Parallel()
	for _, bot := range []struct{ name, first, result, check string }{
		{"dialogflow", "transcription", "completed", `
    - hook: /event
      payload: {event: transcription, data.recognition_result.transcript: book a table, data.recognition_result.is_final: true}
    - hook: /event
      nth: 2
      payload: {event: intent, data.query_result.intent.display_name: booking, data.query_result.fulfillment_text: For how many people?, data.query_result.intent.end_interaction: true}`},
		{"lex", "intent", "caller hungup", `
    - hook: /event
      nth: 3
      payload:
        event: response-text
        "data.messages[0].msg": For how many people?
        "data.messages[0].type": PlainText`},
		{"rasa", "userMessage", "timeout", `
    - hook: /event
      nth: 2
      payload:
        event: botMessage
        "message[0].text": For how many people?`},
	} {
		t.Run(bot.name, func(t *testing.T) {
			t.Parallel()
			app := startNodeApp(t, "ws_verbs.js")
			simulateScenario(t, `
caller:
  bots: [{intents: [{say: book a table, intent: booking, reply: For how many people?}]}]
expect:
  verbs: [`+bot.name+`, hangup]
  spoken: [For how many people]
  received:
    - hook: /event
      payload: {event: `+bot.first+`}
    - hook: /action
      payload: {`+bot.name+`_result: `+bot.result+`}`+bot.check+`
`, app.URL("ws", "/"+bot.name))
		})
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
