package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeV10S2SExample: jambonz's own v10 s2s/openai example (on @jambonz/sdk 0.10)
// runs its main flow: its s2s verb is normalised to llm with vendor openai, the
// scripted model talks, and the actionHook reports the completion_reason.
func TestNodeV10S2SExample(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "v10_s2s_openai.js")
	tl := simulateScenario(t, `
env_vars:
  OPENAI_API_KEY: sk-test
caller:
  llm:
    - turns:
        - agent: Hi! How can I help?
        - user: What time is it?
        - agent: It is noon.
      end: normal conversation end
  hangup_after: 2m
expect:
  verbs: [llm]
  spoken: [How can I help, noon]
  received:
    - type: verb:hook
      hook: /s2s-complete
      payload: {completion_reason: normal conversation end}
`, "--idle-limit", "300ms", app.URL("ws", "/"))
	tl.inOrder(t,
		step("msg.sent", "type", "session:new"),
		step("verb.start", "verb", "llm"),
		step("agent.spoke", "text", "Hi! How can I help?"),
		step("caller.input", "value", "What time is it?"),
		step("msg.sent", "type", "verb:hook"),
		step("verb.end", "verb", "llm"),
	)
	done, ok := app.waitEvent("s2s-complete", appEventTimeout)
	if !ok || done.str("completion_reason") != "normal conversation end" {
		t.Errorf("the app's actionHook handler saw %v", done)
	}
	if ev, _ := app.waitEvent("session:new", appEventTimeout); ev.str("has_key") != "" && ev["has_key"] != true {
		t.Errorf("the app did not get its OPENAI_API_KEY from env_vars: %v", ev)
	}
}

// TestNodeV10S2SWithoutKey: without the API key the example sends auth {} and
// jambonz's openai task refuses to build: the call is rejected, as on jambonz.
func TestNodeV10S2SWithoutKey(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "v10_s2s_openai.js")
	sim := runSimulate(t, "--scenario", writeScenario(t, "expect:\n  reason: invalid-app-payload\n"), app.URL("ws", "/"))
	if sim.exitCode != 0 {
		t.Fatalf("exit %d: the rejection was expected\n%s", sim.exitCode, sim.stderr)
	}
	alert := sim.lines.one(t, "alert")
	if !strings.Contains(alert.str("detail"), "auth.apiKey") {
		t.Errorf("alert %v, want one naming auth.apiKey", alert)
	}
}

// TestNodeLLMToolCall: an app on @jambonz/node-client-ws gets llm:event and
// llm:tool-call from the scripted model, answers with sendToolOutput and updateLlm;
// the output and the update are recorded in the timeline.
func TestNodeLLMToolCall(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_agent.js")
	tl := simulateScenario(t, `
caller:
  llm:
    - turns:
        - agent: Hello, I can tell you the weather.
        - user: What is it like in Paris?
        - tool_call: {name: get_weather, args: {city: Paris}}
        - agent: It is sunny in Paris.
expect:
  verbs: [llm, say, hangup]
  tool_calls: [get_weather]
  tool_outputs:
    - tool: get_weather
      output: {item.output: sunny in Paris, type: conversation.item.create}
  sent:
    - command: llm:update
      payload: {type: session.update}
  received:
    - type: llm:tool-call
      payload: {name: get_weather, args.city: Paris, tool_call_id: call_1}
    - type: llm:event
      payload: {type: response.audio_transcript.done}
`, app.URL("ws", "/agent"))
	tl.inOrder(t,
		step("msg.sent", "type", "llm:event"),
		step("msg.sent", "type", "llm:tool-call"),
		step("msg.recv", "command", "llm:tool-output"),
		step("msg.sent", "type", "verb:hook"),
		step("verb.start", "verb", "say"),
	)
	call, ok := app.waitEvent("llm:tool-call", appEventTimeout)
	if !ok || call.str("name") != "get_weather" || call.str("tool_call_id") != "call_1" {
		t.Errorf("the app's toolHook handler saw %v", call)
	}
	if evs := app.Named("llm:event"); len(evs) != 3 { // two agent turns and the user's, by the verb's events list
		t.Errorf("llm:event handler ran %d times, want 3: %v", len(evs), evs)
	}
}

// TestNodeTTSTokensAndBargeIn: config ttsStream + bargeIn (the llm-streaming
// template): each utterance reaches the bargeIn actionHook, the app streams its
// answer with sendTtsTokens (each answered by tts:tokens-result, so the SDK's
// promises settle) and flushes; the caller who talks over the second answer
// interrupts it (user_interruption, which the SDK turns into tts:user_interrupt).
func TestNodeTTSTokensAndBargeIn(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_agent.js")
	tl := simulateScenario(t, `
caller:
  speech:
    - speech: what is my balance
    - speech: and my last payment
    - speech: stop
      interrupt: true
expect:
  verbs_in_order: [config, say, say, hangup]
  spoken: ["You said what is my balance. Anything else?"]
  sent:
    - command: tts:tokens
      payload: {id: 1, tokens: "You said "}
  received:
    - type: tts:streaming-event
      payload: {event_type: stream_open}
    - type: tts:streaming-event
      nth: 2
      payload: {event_type: user_interruption}
    - type: tts:tokens-result
      payload: {id: 1, status: ok}
`, app.URL("ws", "/stream"))
	tl.inOrder(t,
		step("caller.input", "value", "what is my balance"),
		step("msg.recv", "command", "tts:tokens"),
		step("msg.sent", "type", "tts:tokens-result"),
		step("msg.recv", "command", "tts:flush"),
		step("agent.spoke", "source", "tokens"),
		step("caller.input", "value", "and my last payment"),
	)
	if _, ok := app.waitEvent("tokens-sent", appEventTimeout); !ok {
		t.Error("the app's sendTtsTokens promises never settled")
	}
	if _, ok := app.waitEvent("user-interrupt", appEventTimeout); !ok {
		t.Error("the app never saw tts:user_interrupt")
	}
	for _, e := range app.Named("tokens-error") {
		t.Errorf("sendTtsTokens failed: %v", e)
	}
}

// TestNodeAgentUnderSwitchboardTest: the same app under `switchboard test`, with a
// scenario that checks the tool output: it passes; an app that returns the wrong
// output fails the test (exit 1), naming the output.
func TestNodeAgentUnderSwitchboardTest(t *testing.T) {
	t.Parallel()
	scenario := `app: ws://127.0.0.1:1/agent
caller:
  llm:
    - turns:
        - user: Weather in Paris?
        - tool_call: {name: get_weather, args: {city: Paris}}
        - agent: It is sunny.
expect:
  verbs: [llm, say, hangup]
  tool_outputs:
    - tool: get_weather
      output: {item.output: sunny in Paris}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "weather.yaml"), []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		code int
	}{{nil, 0}, {[]string{"WRONG_OUTPUT=1"}, 1}} {
		app := startNodeApp(t, "ws_agent.js", tc.env...)
		code, stdout, stderr := runTestCmd(t, "--app", app.URL("ws", ""), dir)
		if code != tc.code {
			t.Fatalf("env %v: exit %d, want %d\n%s\n%s", tc.env, code, tc.code, stdout, stderr)
		}
		if tc.code == 1 && !strings.Contains(stdout, `output item.output is "rain", want "sunny in Paris"`) {
			t.Errorf("the failure does not name the output:\n%s", stdout)
		}
	}
}
