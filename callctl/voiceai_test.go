package callctl_test

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// An openai_s2s conversation with a tool call: the vendor's events go to the
// eventHook as llm:event, the tool call as llm:tool-call with its hook, the app's
// llm:tool-output is recorded (and its shape checked), then the actionHook reports
// the completion_reason.
func TestLLMToolCallOverWebSocket(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "openai_s2s",
			"auth": map[string]any{"apiKey": "k"}, "llmOptions": map[string]any{"response_create": map[string]any{}},
			"eventHook": "/event", "toolHook": "/tool", "actionHook": "/done",
			"events": []string{"response.audio_transcript.done", "response.output_item.done"}})
		call := s.next("llm:tool-call")
		data := call["data"].(map[string]any)
		s.send(map[string]any{"type": "command", "command": "llm:tool-output", "tool_call_id": data["tool_call_id"],
			"data": map[string]any{"type": "conversation.item.create", "item": map[string]any{
				"type": "function_call_output", "call_id": data["tool_call_id"], "output": "sunny"}}})
		done := s.next("verb:hook")
		s.ack(done, map[string]any{"verb": "hangup"})
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.LLMs = []callctl.LLMScript{{Turns: []callctl.LLMTurn{
		{Agent: "Hi, how can I help?"},
		{User: "Weather in Paris?"},
		{ToolCall: &callctl.ToolCallScript{Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
		{Agent: "It is sunny."},
	}, End: "normal conversation end"}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	events := srv.find("llm:event")
	if len(events) != 3 { // two transcripts and the tool call's output_item.done; the user transcript is filtered out
		t.Fatalf("llm:event messages %v", events)
	}
	if events[0]["hook"] != "/event" || events[0]["data"].(map[string]any)["transcript"] != "Hi, how can I help?" {
		t.Errorf("first llm:event %v", events[0])
	}
	calls := srv.find("llm:tool-call")
	if len(calls) != 1 || calls[0]["hook"] != "/tool" {
		t.Fatalf("llm:tool-call %v", calls)
	}
	d := calls[0]["data"].(map[string]any)
	if d["name"] != "get_weather" || d["tool_call_id"] != "call_1" || d["args"].(map[string]any)["city"] != "Paris" {
		t.Errorf("llm:tool-call data %v", d)
	}
	if len(r.ToolCalls) != 1 || !r.ToolCalls[0].Answered || r.ToolCalls[0].Dropped != "" {
		t.Fatalf("tool calls %+v", r.ToolCalls)
	}
	done := srv.find("verb:hook")
	if len(done) != 1 || done[0]["hook"] != "/done" || done[0]["data"].(map[string]any)["completion_reason"] != "normal conversation end" {
		t.Errorf("actionHook %v", done)
	}
	var spoken []string
	for _, s := range r.Spoken {
		spoken = append(spoken, s.Text)
	}
	if !slices.Equal(spoken, []string{"Hi, how can I help?", "It is sunny."}) {
		t.Errorf("spoken %v", spoken)
	}
}

// A tool output in a shape the vendor does not take is recorded as dropped, as
// jambonz drops it.
func TestLLMToolOutputWrongShape(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), map[string]any{"verb": "llm", "vendor": "ultravox",
			"auth": map[string]any{"apiKey": "k"}, "llmOptions": map[string]any{}, "toolHook": "/tool"}, map[string]any{"verb": "hangup"})
		call := s.next("llm:tool-call")
		s.send(map[string]any{"type": "command", "command": "llm:tool-output",
			"tool_call_id": call["data"].(map[string]any)["tool_call_id"], "data": map[string]any{"result": "42"}})
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.LLMs = []callctl.LLMScript{{Turns: []callctl.LLMTurn{{ToolCall: &callctl.ToolCallScript{Name: "answer", ID: "inv-1"}}}}}
	r := run(t, o)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "inv-1" || !strings.Contains(r.ToolCalls[0].Dropped, "client_tool_result") {
		t.Fatalf("tool calls %+v", r.ToolCalls)
	}
}

// tts:tokens are answered with tts:tokens-result; a streaming say speaks them and
// ends at the flush; config bargeIn hears the caller, who interrupts the stream
// (user_interruption) and whose speech goes to the bargeIn actionHook.
func TestTTSTokensAndBargeIn(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"),
			map[string]any{"verb": "config", "ttsStream": map[string]any{"enable": true},
				"bargeIn": map[string]any{"enable": true, "sticky": true, "actionHook": "/speech", "input": []string{"speech"}}},
			map[string]any{"verb": "say", "text": "Hello!"})
		// Turn 1: a streamed reply, flushed: the caller speaks again after it.
		s.ack(s.next("verb:hook"))
		s.send(map[string]any{"type": "command", "command": "tts:tokens", "data": map[string]any{"id": 1, "tokens": "Sure, "}})
		s.next("tts:tokens-result")
		s.send(map[string]any{"type": "command", "command": "tts:tokens", "data": map[string]any{"id": 2, "tokens": "here it is."}})
		s.next("tts:tokens-result")
		s.send(map[string]any{"type": "command", "command": "tts:flush"})
		// Turn 2: the caller interrupts as soon as the reply starts.
		s.ack(s.next("verb:hook"))
		s.send(map[string]any{"type": "command", "command": "tts:tokens", "data": map[string]any{"id": 3, "tokens": "Well, "}})
		s.next("tts:tokens-result")
		s.ack(s.next("verb:hook"))
		s.send(map[string]any{"type": "command", "command": "redirect", "data": []map[string]any{{"verb": "hangup"}}})
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.Speech = []callctl.Utterance{{Speech: "what is my balance"}, {Speech: "and my last payment"}, {Speech: "stop", Interrupt: true}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	results := srv.find("tts:tokens-result")
	if len(results) != 3 || results[0]["data"].(map[string]any)["status"] != "ok" || results[0]["data"].(map[string]any)["id"] != float64(1) {
		t.Fatalf("tts:tokens-result %v", results)
	}
	var events []string
	for _, m := range srv.find("tts:streaming-event") {
		events = append(events, m["data"].(map[string]any)["event_type"].(string))
	}
	// stream_open, then a user_interruption each time the bargeIn hears the caller.
	if !slices.Equal(events, []string{"stream_open", "user_interruption", "user_interruption", "user_interruption"}) {
		t.Errorf("tts:streaming-event %v", events)
	}
	hooks := srv.find("verb:hook")
	if len(hooks) != 3 || hooks[0]["hook"] != "/speech" {
		t.Fatalf("bargeIn hooks %v", hooks)
	}
	sp := hooks[1]["data"].(map[string]any)["speech"].(map[string]any)
	if sp["alternatives"].([]any)[0].(map[string]any)["transcript"] != "and my last payment" {
		t.Errorf("second bargeIn speech %v", sp)
	}
	var spoken []string
	for _, s := range r.Spoken {
		spoken = append(spoken, s.Source+":"+s.Text)
	}
	if !slices.Equal(spoken, []string{"say:Hello!", "tokens:Sure, here it is.", "tokens:Well, [interrupted]"}) {
		t.Errorf("spoken %v", spoken)
	}
}

// A toolHook request that fails ends the llm verb as jambonz's vendor tasks do
// (lib/tasks/llm/llms/openai_s2s.js _onServerEvent: sendToolHook throws, results
// {completionReason: 'client error calling function', error: err}, notifyTaskDone):
// the actionHook gets that reason and the error's enumerable fields, and the rest of
// the scripted conversation never happens. An answer that is not a JSON object or
// array throws there too (index.js sendToolHook sets .type on it).
func TestLLMToolHookFailureEndsVerb(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tool  http.HandlerFunc
		error map[string]any
	}{
		{"500", statusReply(500), map[string]any{"status_code": float64(500)}},
		{"text answer", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("OK")) }, map[string]any{}},
		{"JSON string", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`"sunny"`))
		}, map[string]any{}},
		{"refused", nil, map[string]any{"errno": float64(-111), "code": "ECONNREFUSED", "syscall": "connect", "address": "127.0.0.1", "port": float64(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := "/tool"
			if tc.tool == nil {
				tool = "http://127.0.0.1:1/tool"
			}
			srv, url := newHTTP(t, map[string]http.HandlerFunc{
				"/call": verbsReply(map[string]any{"verb": "openai_s2s", "auth": map[string]any{"apiKey": "k"},
					"llmOptions": map[string]any{"response_create": map[string]any{}}, "toolHook": tool, "actionHook": "/done"}),
				"/tool": tc.tool,
				"/done": verbsReply(map[string]any{"verb": "hangup"}),
			})
			o := baseOptions(t, url+"/call")
			o.Script.LLMs = []callctl.LLMScript{{Turns: []callctl.LLMTurn{
				{ToolCall: &callctl.ToolCallScript{Name: "get_weather"}},
				{Agent: "It is sunny."},
			}}}
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			done := srv.last("/done").payload
			if done["completion_reason"] != "client error calling function" || !reflect.DeepEqual(done["error"], tc.error) {
				t.Fatalf("actionHook completion_reason %v error %#v, want client error calling function, %v", done["completion_reason"], done["error"], tc.error)
			}
			if len(r.Spoken) != 0 {
				t.Errorf("spoken %v: the conversation ended at the tool call", r.Spoken)
			}
		})
	}
}

// The llm verb's actionHook failing ends the call, as jambonz's vendor tasks let
// performAction's error out of the task and call-session.js exec stops
// (lib/tasks/llm/llms/openai_s2s.js exec, lib/tasks/task.js performAction): an HTTP
// error, an unreachable host, verbs that do not validate. The verbs after the llm
// never run.
func TestLLMActionHookFailureEndsCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action string
		reply  http.HandlerFunc
		alert  callctl.AlertType
	}{
		{"500", "/done", statusReply(500), ""},
		{"unreachable", "http://127.0.0.1:1/done", nil, callctl.AlertWebhookConnectionFailure},
		{"invalid verbs", "/done", verbsReply(map[string]any{"verb": "no-such-verb"}), callctl.AlertInvalidAppPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := newHTTP(t, map[string]http.HandlerFunc{
				"/call": verbsReply(map[string]any{"verb": "openai_s2s", "auth": map[string]any{"apiKey": "k"},
					"llmOptions": map[string]any{"response_create": map[string]any{}}, "actionHook": tc.action},
					map[string]any{"verb": "redirect", "actionHook": "/after"}),
				"/done": tc.reply,
			})
			r := run(t, baseOptions(t, url+"/call"))
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonActionHookFailed, 200)
			if len(srv.all("/after")) != 0 {
				t.Fatal("the verb after the llm ran")
			}
			if tc.alert != "" && !hasAlert(r, tc.alert) {
				t.Errorf("alerts %v, want %s", r.Alerts, tc.alert)
			}
		})
	}
	// Over a WebSocket, an actionHook whose ack never comes fails too.
	t.Run("ack timeout", func(t *testing.T) {
		waitsOutATimeout(t)
		_, url := newWS(t, func(s *wsSession) {
			s.ack(s.next("session:new"), map[string]any{"verb": "openai_s2s", "auth": map[string]any{"apiKey": "k"},
				"llmOptions": map[string]any{"response_create": map[string]any{}}, "actionHook": "/done"},
				map[string]any{"verb": "pause", "length": 1})
			s.next("verb:hook") // never acked
			s.drain()
		})
		o := baseOptions(t, url)
		o.AckTimeout = time.Second
		r := run(t, o)
		wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonActionHookFailed, 200)
	})
}

// Payloads go out as jambonz's requestors write them (snakeCaseKeys with
// to-snake-case, customerData, sip, env_vars and args verbatim at any depth:
// lib/utils/http-requestor.js request, lib/utils/snakecase-keys.js): a scripted
// llm event's keys as to-snake-case spells them, and a transcriptionHook's payload,
// which spreads the CallInfo object, with its _customerData spelt customerdata and
// its keys snake_cased (lib/tasks/transcribe.js _resolve).
func TestPayloadKeysAsJambonzSpellsThem(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(
			map[string]any{"verb": "tag", "data": map[string]any{"orderId": 7}},
			map[string]any{"verb": "openai_s2s", "auth": map[string]any{"apiKey": "k"},
				"llmOptions": map[string]any{"response_create": map[string]any{}}, "eventHook": "/event", "events": []string{"all"}},
			map[string]any{"verb": "transcribe", "transcriptionHook": "/transcript"}),
		"/transcript": verbsReply(map[string]any{"verb": "hangup"}),
	})
	o := baseOptions(t, url+"/call")
	o.Script.LLMs = []callctl.LLMScript{{Turns: []callctl.LLMTurn{{Event: map[string]any{
		"type": "response.done", "callSID": "x", "user_transcriptEvent": "y", "itemId": "z",
		"args": map[string]any{"cityName": "Paris"}, "customerData": map[string]any{"keepMe": true}}}}}}
	o.Script.Speech = []callctl.Utterance{{Speech: "hello there", After: 40 * time.Second}}
	run(t, o)
	evt := srv.last("/event").payload
	want := map[string]any{"type": "response.done", "call_s_i_d": "x", "user_transcriptevent": "y", "item_id": "z",
		"args": map[string]any{"cityName": "Paris"}, "customerData": map[string]any{"keepMe": true}}
	for k, v := range want {
		if !reflect.DeepEqual(evt[k], v) {
			t.Errorf("llm:event %s = %v, want %v (payload %v)", k, evt[k], v, evt)
		}
	}
	tr := srv.last("/transcript").payload
	if cd, _ := tr["customerdata"].(map[string]any); cd["order_id"] != float64(7) || tr["customerData"] != nil || tr["_customer_data"] != nil {
		t.Errorf("transcriptionHook payload %v: want customerdata {order_id: 7}", tr)
	}
}

// verb:status names an llm (s2s, a vendor shortcut) by its vendor task's TaskName, as
// jambonz's TaskLlm name getter returns this.llm.name (lib/tasks/llm/index.js,
// lib/tasks/llm/llms/*.js), not "llm".
func TestLLMVerbStatusName(t *testing.T) {
	for _, tc := range []struct {
		verb map[string]any
		name string
	}{
		{map[string]any{"verb": "openai_s2s", "llmOptions": map[string]any{"response_create": map[string]any{}}}, "Llm_OpenAI_s2s"},
		{map[string]any{"verb": "s2s", "vendor": "ultravox", "llmOptions": map[string]any{}}, "Llm_Ultravox_s2s"},
		{map[string]any{"verb": "llm", "vendor": "elevenlabs", "auth": map[string]any{"agent_id": "a", "apiKey": "k"}, "llmOptions": map[string]any{}}, "Llm_Elevenlabs_s2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := maps.Clone(tc.verb)
			if v["auth"] == nil {
				v["auth"] = map[string]any{"apiKey": "k"}
			}
			srv, url := newWS(t, func(s *wsSession) {
				s.ack(s.next("session:new"), map[string]any{"verb": "config", "notifyEvents": true}, v, hangupVerb)
				s.drain()
			})
			run(t, baseOptions(t, url))
			var names []any
			for _, m := range srv.find("verb:status") {
				names = append(names, m["data"].(map[string]any)["name"])
			}
			if len(names) < 3 || names[1] != tc.name || names[2] != tc.name {
				t.Fatalf("verb:status names %v, want %s starting and finished", names, tc.name)
			}
		})
	}
}
