package scenario

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
)

const aiScenario = `app: ws://127.0.0.1:3000/agent
env_vars:
  OPENAI_API_KEY: sk-test
caller:
  speech:
    - speech: what is my balance
      after: 2s
    - digits: "1#"
      interrupt: true
  llm:
    - turns:
        - agent: Hello
        - tool_call: {name: get_weather, args: {city: Paris, days: 2}}
        - event: {type: response.done, response: {status: completed}}
      end: server error
      error: {code: rate_limit_exceeded}
  dials:
    - amd: machine
      dtmf: [{digits: "*2", leg: caller, after: 3s}]
      confirm: [{digits: "1"}]
      refer: {to: "sip:bob@example.com"}
  queues: [{dequeue_after: 20s, position: 2, size: 3}]
  conferences: [{running: true, events: [{event: start-talking, after: 2s}]}]
expect:
  verbs_in_order: [llm, hangup]
  tool_calls: [get_weather]
  tool_outputs:
    - tool: get_weather
      output: {item.output: sunny}
  spoken: [Hello]
  sent:
    - command: llm:tool-output
      payload: {tool_call_id: call_1}
`

func TestVoiceAIScenario(t *testing.T) {
	s, err := Parse([]byte(aiScenario))
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Script()
	if len(sc.Speech) != 2 || sc.Speech[1].Digits != "1#" || !sc.Speech[1].Interrupt || len(sc.LLMs) != 1 ||
		sc.LLMs[0].Turns[1].ToolCall.Args["days"] != float64(2) || sc.LLMs[0].End != "server error" ||
		sc.Dials[0].AMD != "machine" || sc.Dials[0].DTMF[0].Leg != "caller" || sc.Dials[0].Refer.To != "sip:bob@example.com" ||
		sc.Queues[0].Position != 2 || !sc.Conferences[0].Running || s.EnvVars["OPENAI_API_KEY"] != "sk-test" {
		t.Fatalf("script %+v", sc)
	}
	out, _ := json.Marshal(map[string]any{"type": "conversation.item.create", "item": map[string]any{"output": "sunny"}})
	var output any
	_ = json.Unmarshal(out, &output)
	r := &callctl.Result{
		Verbs:     []string{"config", "llm", "say", "hangup"},
		ToolCalls: []callctl.ToolCall{{ID: "call_1", Name: "get_weather", Answered: true, Output: output}},
		Spoken:    []callctl.Spoken{{Source: "llm", Text: "Hello there"}},
		Commands:  []callctl.Command{{Name: "llm:tool-output", ToolCallID: "call_1", Data: out}},
		Timeline:  []callctl.Event{{Kind: callctl.KindCallEnd}},
	}
	if fails := s.Expect.Check(r); len(fails) != 0 {
		t.Fatalf("expectations failed: %v", fails)
	}
	// A wrong output, a dropped one, a missing call and speech each fail.
	r.ToolCalls[0].Output = map[string]any{"type": "conversation.item.create", "item": map[string]any{"output": "rain"}}
	fails := s.Expect.Check(r)
	if len(fails) != 1 || !strings.Contains(fails[0], `tool_outputs[0]: the 1st get_weather tool call: output item.output is "rain", want "sunny"`) {
		t.Fatalf("wrong output: %v", fails)
	}
	r.ToolCalls[0].Output, r.ToolCalls[0].Dropped = output, "jambonz drops it: OpenAI wants conversation.item.create"
	if fails := s.Expect.Check(r); len(fails) != 1 || !strings.Contains(fails[0], "jambonz drops it") {
		t.Fatalf("dropped output: %v", fails)
	}
	r.ToolCalls, r.Spoken, r.Verbs = nil, nil, []string{"hangup", "llm"}
	if fails := s.Expect.Check(r); len(fails) != 4 { // verbs_in_order, tool_calls, tool_outputs, spoken; sent still holds
		t.Fatalf("want 4 failures, got %v", fails)
	}
}

// A malformed script is refused naming its line.
func TestVoiceAIScenarioErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
		msg  string
	}{
		{"caller:\n  speech:\n    - speech: hi\n      digits: \"1\"\n", 3, "give one of speech or digits"},
		{"caller:\n  llm:\n    - turns:\n        - agent: hi\n          user: there\n", 4, "give one of agent, user, tool_call or event"},
		{"caller:\n  llm:\n    - turns:\n        - tool_call: {args: {a: 1}}\n", 4, "a tool call needs a name"},
		{"caller:\n  llm:\n    - turns:\n        - shout: hi\n", 4, "unknown field"},
		{"caller:\n  dials:\n    - amd: robot\n", 3, "want one of human"},
		{"caller:\n  dials:\n    - dtmf: [{digits: x}]\n", 3, "is not DTMF"},
		{"caller:\n  conferences:\n    - events:\n        - event: singing\n", 4, "start-talking"},
		{"expect:\n  verbs_include: [s2s]\n", 2, `"s2s" runs as "llm"`},
		{"expect:\n  tool_outputs:\n    - output: {a: 1}\n", 3, "name the tool call"},
		{"expect:\n  sent:\n    - nth: 2\n", 3, "name the command"},
	} {
		_, err := Parse([]byte(tc.src))
		var se *Error
		if err == nil || !asError(err, &se) || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Parse(%q) = %v, want line %d: %s", tc.src, err, tc.line, tc.msg)
		}
	}
}

func asError(err error, se **Error) bool {
	e, ok := err.(*Error)
	*se = e
	return ok
}
