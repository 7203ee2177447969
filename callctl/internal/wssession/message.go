package wssession

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidMessage is wrapped by every error DecodeAppMessage returns. Such a
// message raises invalid-app-payload and is answered with jambonz:error; the
// session goes on (docs/call-control.md §4).
var ErrInvalidMessage = errors.New("invalid application message")

// Message types an application may send.
const (
	MsgAck     = "ack"
	MsgCommand = "command"
)

// AppMessage is one decoded message from a WebSocket application.
type AppMessage struct {
	// Type is "ack" or "command".
	Type string
	// MsgID is the msgid an ack answers: empty when the application's msgid was not
	// a string (jambonz looks it up as given and finds nothing to answer).
	MsgID string
	// Command names a command ("redirect", "call:status", ...).
	Command string
	// QueueCommand asks a redirect to append its verbs instead of replacing
	// (queueCommand, taken as JavaScript takes a truthy value).
	QueueCommand bool
	// Data is the raw data: an ack's verbs, a command's argument. nil when absent.
	Data json.RawMessage
	// Raw is the message as received, for jambonz:error's content.
	Raw []byte
	// ToolCallID is llm:tool-output's tool_call_id (beside data, as the SDKs send
	// it); CallSid the callSid a command names (a dialed leg), "" for the call's own.
	ToolCallID string
	CallSid    string
}

// commandsWithoutData may be sent with no data (jambonz's list); every other command
// needs it. llm:tool-output carries its result beside data, with tool_call_id.
var commandsWithoutData = map[string]bool{
	"tts:flush": true, "tts:clear": true, "llm:tool-output": true,
}

// knownCommands are the commands jambonz's call session acts on
// (lib/session/call-session.js _onCommand). Others are accepted by its message
// decoding and then logged and ignored.
var knownCommands = map[string]bool{
	"redirect": true, "call:status": true, "mute:status": true, "conf:mute-status": true,
	"conf:hold-status": true, "listen:status": true, "stream:status": true, "record": true, "whisper": true,
	"sip:request": true, "dub": true, "dtmf": true, "tts:tokens": true, "tts:flush": true,
	"tts:clear": true, "llm:tool-output": true, "llm:update": true, "transcribe:status": true,
	"boostAudioSignal": true, "media:path": true, "conf:participant-action": true,
	"config": true, "dial": true,
}

// KnownCommand reports whether jambonz acts on a command of that name.
func KnownCommand(name string) bool { return knownCommands[name] }

// DecodeAppMessage decodes and checks one text message from an application as
// jambonz's lib/utils/ws-requestor.js does (_onMessage): a JSON object with a
// "type"; an "ack" needs a truthy "msgid", a "command" a non-empty "command" and
// truthy "data" unless the command takes none. What the data holds (verbs, a call
// hook, an unknown command) is for the call to judge, as jambonz's call session
// does. Anything else is an error wrapping ErrInvalidMessage.
func DecodeAppMessage(raw []byte) (AppMessage, error) {
	var env struct {
		Type         json.RawMessage `json:"type"`
		MsgID        json.RawMessage `json:"msgid"`
		Command      json.RawMessage `json:"command"`
		QueueCommand json.RawMessage `json:"queueCommand"`
		Data         json.RawMessage `json:"data"`
		ToolCallID   json.RawMessage `json:"tool_call_id"`
		CallSid      json.RawMessage `json:"callSid"`
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return AppMessage{}, invalidMessage("not a JSON object")
	}
	if err := json.Unmarshal(trimmed, &env); err != nil {
		return AppMessage{}, invalidMessage("invalid JSON: %v", err)
	}
	if !Truthy(env.Type) {
		return AppMessage{}, invalidMessage("type property not supplied")
	}
	m := AppMessage{Raw: raw}
	if Truthy(env.Data) {
		m.Data = env.Data
	}
	_ = json.Unmarshal(env.Type, &m.Type)
	switch m.Type {
	case MsgAck:
		if !Truthy(env.MsgID) {
			return AppMessage{}, invalidMessage("msgid not supplied")
		}
		_ = json.Unmarshal(env.MsgID, &m.MsgID) // a number: an ack of nothing
	case MsgCommand:
		if !Truthy(env.Command) {
			return AppMessage{}, invalidMessage("command property not supplied")
		}
		if json.Unmarshal(env.Command, &m.Command) != nil {
			// jambonz switches on the value: no command of that name.
			m.Command = string(env.Command)
		}
		if m.Data == nil && !commandsWithoutData[m.Command] {
			return AppMessage{}, invalidMessage("data property not supplied")
		}
		m.QueueCommand = Truthy(env.QueueCommand)
		// jambonz reads tool_call_id and callSid as they come (ws-requestor.js
		// _onMessage); a string is what the SDKs send, anything else is kept as text.
		m.ToolCallID = stringOrJSON(env.ToolCallID)
		m.CallSid = stringOrJSON(env.CallSid)
	default:
		return AppMessage{}, invalidMessage("invalid type property: %s", env.Type)
	}
	return m, nil
}

// Truthy reports whether a JSON value is truthy in JavaScript: present, and not
// null, false, 0, -0 or "". (An object or array, even empty, is truthy.) jambonz
// tests its messages' fields so (if (data), if (opts.call_hook) ...).
func Truthy(v json.RawMessage) bool {
	switch s := string(bytes.TrimSpace(v)); s {
	case "", "null", "false", `""`:
		return false
	default:
		var f float64
		if json.Unmarshal(v, &f) == nil {
			return f != 0
		}
		return true
	}
}

// stringOrJSON is a JSON string's text, another JSON value's text, "" for none.
func stringOrJSON(raw json.RawMessage) string {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func invalidMessage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
}

// envelope is a message sent to the application (docs/call-control.md §4).
type envelope struct {
	Type    string `json:"type"`
	MsgID   string `json:"msgid"`
	CallSid string `json:"call_sid,omitempty"` // none on an adulted leg's connection
	Hook    string `json:"hook,omitempty"`
	Data    any    `json:"data"`
	B3      string `json:"b3,omitempty"`
}

// Message types sent to the application. session:new, session:reconnect,
// session:redirect, verb:hook and dial:confirm wait for an ack; the others are fire
// and forget.
const (
	MsgSessionNew       = "session:new"
	MsgSessionReconnect = "session:reconnect"
	MsgSessionRedirect  = "session:redirect"
	MsgVerbHook         = "verb:hook"
	MsgDialConfirm      = "dial:confirm"
	MsgCallStatus       = "call:status"
	MsgVerbStatus       = "verb:status"
	MsgJambonzError     = "jambonz:error"
	// The voice-AI messages and the dialed leg's adulting, fire and forget as
	// jambonz sends them (ws-requestor.js MTYPE_WANTS_ACK lists those that do not
	// wait). llm:event and llm:tool-call carry their hook.
	MsgLlmEvent          = "llm:event"
	MsgLlmToolCall       = "llm:tool-call"
	MsgTtsTokensResult   = "tts:tokens-result"
	MsgTtsStreamingEvent = "tts:streaming-event"
	MsgSessionAdulting   = "session:adulting"
)
