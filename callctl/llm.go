package callctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// The llm verb (s2s and the vendor shortcuts) with a scripted model (Script.LLMs):
// each vendor's events, tool calls and the tool outputs and updates it accepts, as
// jambonz-feature-server 0.9.8's lib/tasks/llm/index.js and lib/tasks/llm/llms/*.js
// have them.

// ToolCall is a tool call the model made and what the application answered
// (Result.ToolCalls).
type ToolCall struct {
	ID, Name string
	Args     map[string]any
	// Vendor is the llm verb's vendor.
	Vendor string
	// Event is the index in Result.Timeline of the tool call's line.
	Event int
	// Answered reports that the application sent an output (llm:tool-output, or the
	// toolHook's HTTP answer); Output is its data.
	Answered bool
	Output   any
	// Dropped says why jambonz would not pass the output on to the model (its
	// vendor wants another shape); "" when it would.
	Dropped string
}

// llmVendor is how one vendor's session looks to the application.
type llmVendor struct {
	// task is jambonz's task name (verb:status); events the vendor's server events,
	// the default of the verb's events list.
	task   string
	events []string
	// typeOf is the event type the events list filters on.
	typeOf func(evt map[string]any) string
	// agent and user build the transcript events of a turn.
	agent, user func(text string, n int) map[string]any
	// toolCall builds the event of a tool call and the llm:tool-call data.
	toolCall func(tc ToolCallScript, id string) (evt, data map[string]any)
	// output checks a tool output's shape; update an llm:update's. Each returns why
	// jambonz drops it, "" when it passes it on.
	output, update func(data map[string]any) string
}

func typeField(evt map[string]any) string { s, _ := evt["type"].(string); return s }

// wantType is a shape check: data.type (or data.data.type with nested) must be
// one of types.
func wantType(nested bool, what string, types ...string) func(map[string]any) string {
	return func(d map[string]any) string {
		if nested {
			inner, _ := d["data"].(map[string]any)
			d = inner
		}
		t, _ := d["type"].(string)
		for _, want := range types {
			if t == want {
				return ""
			}
		}
		return fmt.Sprintf("jambonz drops it: %s wants %s", what, strings.Join(types, " or "))
	}
}

var openaiEvents = []string{"error", "session.created", "session.updated", "conversation.created",
	"input_audio_buffer.committed", "input_audio_buffer.cleared", "input_audio_buffer.speech_started",
	"input_audio_buffer.speech_stopped", "conversation.item.created",
	"conversation.item.input_audio_transcription.completed", "conversation.item.input_audio_transcription.failed",
	"conversation.item.truncated", "conversation.item.deleted", "response.created", "response.done",
	"response.output_item.added", "response.output_item.done", "response.content_part.added",
	"response.content_part.done", "response.text.delta", "response.text.done", "response.audio_transcript.delta",
	"response.audio_transcript.done", "response.audio.delta", "response.audio.done",
	"response.function_call_arguments.delta", "response.function_call_arguments.done", "rate_limits.updated",
	"output_audio.playback_started", "output_audio.playback_stopped"}

var openaiVendor = &llmVendor{
	task: "Llm_OpenAI_s2s", events: openaiEvents, typeOf: typeField,
	agent: func(text string, n int) map[string]any {
		return map[string]any{"type": "response.audio_transcript.done", "event_id": fmt.Sprintf("event_%d", n),
			"response_id": fmt.Sprintf("resp_%d", n), "item_id": fmt.Sprintf("item_%d", n), "output_index": 0,
			"content_index": 0, "transcript": text}
	},
	user: func(text string, n int) map[string]any {
		return map[string]any{"type": "conversation.item.input_audio_transcription.completed",
			"event_id": fmt.Sprintf("event_%d", n), "item_id": fmt.Sprintf("item_%d", n), "content_index": 0, "transcript": text}
	},
	toolCall: func(tc ToolCallScript, id string) (map[string]any, map[string]any) {
		args, _ := json.Marshal(argsOf(tc))
		evt := map[string]any{"type": "response.output_item.done", "event_id": "event_" + id, "response_id": "resp_" + id,
			"output_index": 0, "item": map[string]any{"id": "item_" + id, "object": "realtime.item", "type": "function_call",
				"status": "completed", "name": tc.Name, "call_id": id, "arguments": string(args)}}
		return evt, map[string]any{"tool_call_id": id, "name": tc.Name, "args": argsOf(tc)}
	},
	output: wantType(false, `OpenAI's realtime API ({"type":"conversation.item.create","item":{"type":"function_call_output","call_id":...,"output":...}})`, "conversation.item.create"),
	update: wantType(false, "OpenAI's realtime API", "session.update", "conversation.item.create", "conversation.item.delete", "response.cancel"),
}

var voiceAgentVendor = &llmVendor{
	task: "Llm_VoiceAgent_s2s", typeOf: typeField,
	events: []string{"Error", "Welcome", "SettingsApplied", "ConversationText", "UserStartedSpeaking", "EndOfThought",
		"AgentThinking", "FunctionCallRequest", "FunctionCalling", "AgentStartedSpeaking", "AgentAudioDone"},
	agent: func(text string, _ int) map[string]any {
		return map[string]any{"type": "ConversationText", "role": "assistant", "content": text}
	},
	user: func(text string, _ int) map[string]any {
		return map[string]any{"type": "ConversationText", "role": "user", "content": text}
	},
	toolCall: func(tc ToolCallScript, id string) (map[string]any, map[string]any) {
		args, _ := json.Marshal(argsOf(tc))
		evt := map[string]any{"type": "FunctionCallRequest", "functions": []any{map[string]any{
			"id": id, "name": tc.Name, "arguments": string(args), "client_side": true}}}
		return evt, map[string]any{"tool_call_id": id, "name": tc.Name, "args": argsOf(tc)}
	},
	output: wantType(true, `the Deepgram voice agent ({"data":{"type":"FunctionCallResponse","id":...,"name":...,"content":...}})`, "FunctionCallResponse"),
	update: wantType(false, "the Deepgram voice agent", "UpdateInstructions", "UpdateSpeak", "InjectAgentMessage"),
}

var ultravoxVendor = &llmVendor{
	task: "Llm_Ultravox_s2s", typeOf: typeField,
	events: []string{"createCall", "pong", "state", "transcript", "conversationText", "clientToolInvocation", "playbackClearBuffer"},
	agent: func(text string, n int) map[string]any {
		return map[string]any{"type": "transcript", "role": "agent", "medium": "voice", "text": text, "final": true, "ordinal": n}
	},
	user: func(text string, n int) map[string]any {
		return map[string]any{"type": "transcript", "role": "user", "medium": "voice", "text": text, "final": true, "ordinal": n}
	},
	toolCall: func(tc ToolCallScript, id string) (map[string]any, map[string]any) {
		evt := map[string]any{"type": "client_tool_invocation", "toolName": tc.Name, "invocationId": id, "parameters": argsOf(tc)}
		return evt, map[string]any{"tool_call_id": id, "name": tc.Name, "args": argsOf(tc)}
	},
	output: wantType(false, `Ultravox ({"type":"client_tool_result","invocation_id":...,"result":...})`, "client_tool_result"),
	update: wantType(false, "Ultravox", "input_text_message"),
}

var elevenlabsVendor = &llmVendor{
	task: "Llm_Elevenlabs_s2s", typeOf: typeField,
	events: []string{"conversation_initiation_metadata", "user_transcript", "agent_response", "client_tool_call"},
	agent: func(text string, _ int) map[string]any {
		return map[string]any{"type": "agent_response", "agent_response_event": map[string]any{"agent_response": text}}
	},
	user: func(text string, _ int) map[string]any {
		return map[string]any{"type": "user_transcript", "user_transcription_event": map[string]any{"user_transcript": text}}
	},
	toolCall: func(tc ToolCallScript, id string) (map[string]any, map[string]any) {
		evt := map[string]any{"type": "client_tool_call", "client_tool_call": map[string]any{
			"tool_name": tc.Name, "tool_call_id": id, "parameters": argsOf(tc)}}
		return evt, map[string]any{"tool_call_id": id, "name": tc.Name, "args": argsOf(tc)}
	},
	output: wantType(true, `ElevenLabs ({"data":{"type":"client_tool_result","tool_call_id":...,"result":...}})`, "client_tool_result"),
	update: func(map[string]any) string { return "jambonz ignores llm:update for ElevenLabs" },
}

var googleVendor = &llmVendor{
	task: "Llm_Google_s2s", events: []string{"error", "session.created", "session.updated", "llm_event"},
	// google_s2s.js filters every server message as "llm_event".
	typeOf: func(map[string]any) string { return "llm_event" },
	agent: func(text string, _ int) map[string]any {
		return map[string]any{"serverContent": map[string]any{"outputTranscription": map[string]any{"text": text}}}
	},
	user: func(text string, _ int) map[string]any {
		return map[string]any{"serverContent": map[string]any{"inputTranscription": map[string]any{"text": text}}}
	},
	toolCall: func(tc ToolCallScript, id string) (map[string]any, map[string]any) {
		calls := []any{map[string]any{"id": id, "name": tc.Name, "args": argsOf(tc)}}
		// google_s2s.js sends every call of the message at once, under a fixed id.
		return map[string]any{"toolCall": map[string]any{"functionCalls": calls}},
			map[string]any{"tool_call_id": "function_call_id", "type": "toolCall", "functionCalls": calls}
	},
	output: func(d map[string]any) string {
		if _, ok := d["toolResponse"]; ok {
			return ""
		}
		return `jambonz drops it: Gemini wants {"toolResponse":{"functionResponses":[...]}}`
	},
	update: func(map[string]any) string { return "" },
}

// vendorOf is the vendor table of an llm verb (index.js createSpecificLlm).
func vendorOf(v *verbs.Llm) *llmVendor {
	switch v.Vendor {
	case "openai", "microsoft":
		return openaiVendor
	case "voiceagent", "deepgram":
		return voiceAgentVendor
	case "ultravox":
		return ultravoxVendor
	case "elevenlabs":
		return elevenlabsVendor
	case "google":
		return googleVendor
	}
	return openaiVendor // the verb's validation refuses any other
}

func argsOf(tc ToolCallScript) map[string]any {
	if tc.Args == nil {
		return map[string]any{}
	}
	return tc.Args
}

// eventFilter is an llm verb's events list, as _populateEvents reads it: "all" with
// "-name" exclusions, or the names to include; "prefix.*" expands to the vendor's
// events of that prefix.
type eventFilter struct {
	include, exclude map[string]bool
}

func newEventFilter(events, vendorEvents []string) eventFilter {
	if events == nil {
		events = vendorEvents
	}
	expand := func(names []string) map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			if prefix, ok := strings.CutSuffix(n, ".*"); ok {
				for _, e := range vendorEvents {
					if strings.HasPrefix(e, prefix) {
						out[e] = true
					}
				}
				continue
			}
			out[n] = true
		}
		return out
	}
	var minus, plus []string
	for _, e := range events {
		if rest, ok := strings.CutPrefix(e, "-"); ok {
			minus = append(minus, rest)
		} else {
			plus = append(plus, e)
		}
	}
	if contains(events, "all") {
		if len(minus) == 0 {
			return eventFilter{include: expand(vendorEvents)}
		}
		return eventFilter{exclude: expand(minus)}
	}
	return eventFilter{include: expand(plus)}
}

func (f eventFilter) allows(typ string) bool {
	if len(f.include) > 0 {
		return f.include[typ]
	}
	return !f.exclude[typ]
}

// llmRun is the llm verb in progress.
type llmRun struct {
	v      *verbs.Llm
	vendor *llmVendor
	filter eventFilter
}

// defaultLLMScript is the conversation of an llm verb the scenario says nothing of.
var defaultLLMScript = LLMScript{Turns: []LLMTurn{{Agent: "Hello! How can I help you today?"}}}

// llm runs an llm verb: the scripted turns, then its actionHook with the
// completion_reason (jambonz calls it even when the verb was killed).
func (c *callRun) llm(ctx context.Context, v *verbs.Llm) {
	c.answer(ctx)
	script := defaultLLMScript
	if c.llmNext < len(c.opts.Script.LLMs) {
		script = c.opts.Script.LLMs[c.llmNext]
	}
	c.llmNext++
	vendor := vendorOf(v)
	run := &llmRun{v: v, vendor: vendor, filter: newEventFilter(v.Events, vendor.events)}
	c.llmCurrent = run
	defer func() { c.llmCurrent = nil }()
	gen := c.generation
	results := map[string]any{"completion_reason": orString(script.End, "normal conversation end")}
	toolFailed := false
	for _, turn := range script.Turns {
		if !c.spend(ctx, orDefault(turn.After, defaultTurnDelay)) || c.generation != gen {
			results = map[string]any{"completion_reason": "normal conversation end"}
			break
		}
		c.llmTurns++
		n := c.llmTurns
		switch {
		case turn.Agent != "":
			c.recordSpoken("llm", turn.Agent)
			c.llmEvent(ctx, run, vendor.agent(turn.Agent, n))
		case turn.User != "":
			c.recordInput("speech", turn.User)
			c.llmEvent(ctx, run, vendor.user(turn.User, n))
		case turn.Event != nil:
			c.llmEvent(ctx, run, turn.Event)
		case turn.ToolCall != nil:
			if failed := c.llmToolCall(ctx, run, *turn.ToolCall); failed != nil {
				// openai_s2s.js (and each vendor's _onServerEvent): the toolHook
				// threw, so the conversation ends with this reason and the error.
				results = map[string]any{"completion_reason": "client error calling function", "error": failed}
				toolFailed = true
			}
		}
		if c.ended || c.cut || toolFailed {
			break
		}
	}
	if script.Error != nil && !toolFailed {
		results["error"] = script.Error
	}
	if script.Hold && !toolFailed && !c.ended && !c.cut && c.generation == gen {
		c.hold(ctx, func() bool { return false })
	}
	if c.ended {
		return
	}
	// openai_s2s.js (and each vendor) calls performAction once the session is over,
	// killed or not; its verbs replace the application's.
	cut := c.cut
	c.cut = false
	c.llmAction(ctx, v, results)
	c.cut = cut || c.cut
}

// llmAction requests the llm verb's actionHook. Unlike most tasks, the vendor tasks do
// not catch what performAction throws (llms/*_s2s.js exec: await
// this.parent.performAction(this.results)): a hook that fails (an HTTP error, an
// unreachable host, a WebSocket ack that never comes) or answers verbs that do not
// validate (makeTask throws) throws out of the task, and call-session.js exec stops
// running tasks: the call ends (lib/tasks/task.js performAction). A WebSocket closed
// gracefully is no failure: its requestor discards the message (ws-requestor.js).
func (c *callRun) llmAction(ctx context.Context, v *verbs.Llm, results map[string]any) {
	if v.ActionHook == nil || c.ended {
		return
	}
	alerts := len(c.result.Alerts)
	payload := c.payload(results)
	if id := v.ID(); id != "" {
		payload["verb_id"] = id
	}
	ans, ok := c.app.hook(ctx, wssession.MsgVerbHook, v.ActionHook, payload)
	switch {
	case c.ended || c.cut || ctx.Err() != nil:
		return
	case ok && ans.err != nil:
		c.alert(AlertInvalidAppPayload, ans.url, "actionHook returned invalid verb syntax: "+ans.err.Error())
		c.hangup(ReasonActionHookFailed)
		return
	case !ok:
		if len(c.result.Alerts) > alerts { // a failure, alerted (not a graceful close)
			c.hangup(ReasonActionHookFailed)
		}
		return
	}
	c.takeAnswer(ctx, v, ans)
	c.checkDeadline()
}

// llmEvent sends a vendor event to the eventHook when the events list lets it
// through (index.js sendEventHook: only with an eventHook).
func (c *callRun) llmEvent(ctx context.Context, run *llmRun, evt map[string]any) {
	if run.v.EventHook == nil || !run.filter.allows(run.vendor.typeOf(evt)) {
		return
	}
	c.app.message(ctx, wssession.MsgLlmEvent, run.v.EventHook, wirePayload(evt))
}

// llmToolCall makes a tool call: the vendor's event, then the toolHook
// (llm:tool-call), and waits for the application's output: over HTTP the toolHook's
// answer, over a WebSocket an llm:tool-output command, for up to the idle limit. It
// returns the error fields when the toolHook failed (toolCall), nil otherwise.
func (c *callRun) llmToolCall(ctx context.Context, run *llmRun, tc ToolCallScript) map[string]any {
	id := tc.ID
	if id == "" {
		id = fmt.Sprintf("call_%d", len(c.result.ToolCalls)+1)
	}
	evt, data := run.vendor.toolCall(tc, id)
	call := ToolCall{ID: id, Name: tc.Name, Args: argsOf(tc), Vendor: run.v.Vendor, Event: c.timeline.len()}
	if run.vendor == googleVendor {
		call.ID = "function_call_id"
	}
	c.result.ToolCalls = append(c.result.ToolCalls, call)
	index := len(c.result.ToolCalls) - 1
	if run.v.ToolHook == nil {
		c.log(zerolog.WarnLevel).Str("tool", tc.Name).Msg("the model called a tool but the llm verb has no toolHook (jambonz logs it and goes on)")
		c.llmEvent(ctx, run, evt)
		return nil
	}
	payload := wirePayload(data)
	out, answered, failed := c.app.toolCall(ctx, run.v.ToolHook, payload)
	c.llmEvent(ctx, run, evt)
	if failed != nil {
		return failed
	}
	if answered {
		var o map[string]any
		if json.Unmarshal(out, &o) == nil && o != nil {
			if _, typed := o["type"]; !typed {
				// index.js sendToolHook: an HTTP answer without a type is taken as
				// Ultravox's envelope.
				o["type"], o["invocation_id"] = "client_tool_result", call.ID
			}
			out, _ = json.Marshal(o)
		}
		c.toolOutput(ctx, call.ID, out)
		return nil
	}
	ws, isWS := c.app.(*wsApp)
	if !isWS {
		return nil
	}
	deadline := time.Now().Add(c.opts.IdleLimit)
	for !c.ended && !c.cut && !c.result.ToolCalls[index].Answered && !ws.s.Ended() {
		wctx, stop := c.controls.waitContext(ctx, c.opts.Control)
		err := ws.s.Wait(wctx, deadline)
		stop()
		if c.controls.pending() {
			c.urgentControls()
			if c.controls.pending() {
				c.cut = true
				return nil
			}
		}
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			c.log(zerolog.InfoLevel).Str("tool", tc.Name).Msg("no llm:tool-output within the idle limit")
			return nil
		}
	}
	return nil
}

// toolOutput records the application's output for a tool call (llm:tool-output,
// call-session.js _lccToolOutput): only while an llm verb runs, and passed on to the
// model only in the shape its vendor wants.
func (c *callRun) toolOutput(_ context.Context, id string, data json.RawMessage) {
	run := c.llmCurrent
	var out any
	_ = json.Unmarshal(data, &out)
	if run == nil {
		c.log(zerolog.InfoLevel).Str("tool_call_id", id).Msg("llm:tool-output while no llm verb runs: jambonz ignores it")
		c.result.ToolCalls = append(c.result.ToolCalls, ToolCall{ID: id, Answered: true, Output: out, Event: c.timeline.len(),
			Dropped: "jambonz ignores it: no llm verb was running"})
		return
	}
	obj, _ := out.(map[string]any)
	dropped := run.vendor.output(obj)
	for i := len(c.result.ToolCalls) - 1; i >= 0; i-- {
		tc := &c.result.ToolCalls[i]
		if tc.ID == id && !tc.Answered {
			tc.Answered, tc.Output, tc.Dropped = true, out, dropped
			if dropped != "" {
				c.log(zerolog.WarnLevel).Str("tool", tc.Name).Msg("tool output " + dropped)
			}
			return
		}
	}
	c.result.ToolCalls = append(c.result.ToolCalls, ToolCall{ID: id, Answered: true, Output: out, Vendor: run.v.Vendor,
		Event: c.timeline.len(), Dropped: orString(dropped, "no tool call of this id is waiting")})
}

// llmUpdate handles llm:update (_lccLlmUpdate): logged with whether the vendor
// takes it; the scripted model does not change course.
func (c *callRun) llmUpdate(data json.RawMessage) {
	run := c.llmCurrent
	if run == nil {
		c.log(zerolog.InfoLevel).Msg("llm:update while no llm verb runs: jambonz ignores it")
		c.result.LLMUpdates = append(c.result.LLMUpdates, LLMUpdate{Data: data, Dropped: "jambonz ignores it: no llm verb was running"})
		return
	}
	var obj map[string]any
	_ = json.Unmarshal(data, &obj)
	dropped := run.vendor.update(obj)
	c.result.LLMUpdates = append(c.result.LLMUpdates, LLMUpdate{Data: data, Vendor: run.v.Vendor, Dropped: dropped})
}

// LLMUpdate is an llm:update the application sent (Result.LLMUpdates).
type LLMUpdate struct {
	Data   json.RawMessage
	Vendor string
	// Dropped says why jambonz would not pass it on to the model.
	Dropped string
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
