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
	// MsgID is the msgid an ack answers.
	MsgID string
	// Command names a command ("redirect", "call:status", ...).
	Command string
	// QueueCommand asks a redirect to append its verbs instead of replacing.
	QueueCommand bool
	// Data is the raw data: an ack's verbs, a command's argument. nil when absent.
	Data json.RawMessage
	// ToolCallID is llm:tool-output's tool_call_id (beside data, as the SDKs send
	// it); CallSid the callSid a command names (a dialed leg), "" for the call's own.
	ToolCallID string
	CallSid    string
}

// commandsWithoutData may be sent with no data (jambonz's list); every other known
// command needs it. llm:tool-output carries its result beside data, with tool_call_id.
var commandsWithoutData = map[string]bool{
	"tts:flush": true, "tts:clear": true, "llm:tool-output": true,
}

// knownCommands are the commands jambonz accepts from an application.
var knownCommands = map[string]bool{
	"redirect": true, "call:status": true, "mute:status": true, "conf:mute-status": true,
	"conf:hold-status": true, "listen:status": true, "record": true, "whisper": true,
	"sip:request": true, "dub": true, "dtmf": true, "tts:tokens": true, "tts:flush": true,
	"tts:clear": true, "llm:tool-output": true, "llm:update": true, "transcribe:status": true,
	"boostAudioSignal": true, "media:path": true, "tag": true, "conf:participant-action": true,
	"config": true, "dial": true,
}

// DecodeAppMessage decodes and checks one text message from an application: a JSON
// object whose "type" is "ack" (with a non-empty string "msgid"; "data", when
// present, an array of verbs) or "command" (with a known "command", and "data"
// unless the command takes none; redirect's data is an array of verbs). The verbs
// themselves are validated by the caller. Anything else is an error wrapping
// ErrInvalidMessage.
func DecodeAppMessage(raw []byte) (AppMessage, error) {
	var env struct {
		Type         *string         `json:"type"`
		MsgID        json.RawMessage `json:"msgid"`
		Command      *string         `json:"command"`
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
	if env.Type == nil {
		return AppMessage{}, invalidMessage(`missing "type"`)
	}
	m := AppMessage{Type: *env.Type}
	if len(env.Data) > 0 && !bytes.Equal(env.Data, []byte("null")) {
		m.Data = env.Data
	}
	switch m.Type {
	case MsgAck:
		if err := json.Unmarshal(env.MsgID, &m.MsgID); err != nil || m.MsgID == "" {
			return AppMessage{}, invalidMessage(`ack without a "msgid" string`)
		}
		if m.Data != nil && m.Data[0] != '[' {
			return AppMessage{}, invalidMessage(`ack "data" must be an array of verbs`)
		}
	case MsgCommand:
		if env.Command == nil || *env.Command == "" {
			return AppMessage{}, invalidMessage(`command without a "command" name`)
		}
		m.Command = *env.Command
		if !knownCommands[m.Command] {
			return AppMessage{}, invalidMessage("unknown command %q", m.Command)
		}
		if m.Data == nil && !commandsWithoutData[m.Command] {
			return AppMessage{}, invalidMessage(`command %q without "data"`, m.Command)
		}
		if len(env.QueueCommand) > 0 {
			if err := json.Unmarshal(env.QueueCommand, &m.QueueCommand); err != nil {
				return AppMessage{}, invalidMessage(`"queueCommand" must be a boolean`)
			}
		}
		if m.Command == "redirect" && m.Data[0] != '[' && m.Data[0] != '{' && m.Data[0] != '"' {
			return AppMessage{}, invalidMessage(`redirect "data" must be an array of verbs, or a call hook (URL or {"url":...})`)
		}
		// The Node SDK sends call:status data as the bare status string.
		if m.Command == "call:status" && m.Data[0] != '{' && m.Data[0] != '"' {
			return AppMessage{}, invalidMessage(`call:status "data" must be an object or a string`)
		}
		if m.Command == "tag" && m.Data[0] != '{' {
			return AppMessage{}, invalidMessage(`tag "data" must be an object`)
		}
		// jambonz reads tool_call_id and callSid as they come (ws-requestor.js
		// _onMessage); a string is what the SDKs send, anything else is kept as text.
		m.ToolCallID = stringOrJSON(env.ToolCallID)
		m.CallSid = stringOrJSON(env.CallSid)
	default:
		return AppMessage{}, invalidMessage("unknown message type %q", m.Type)
	}
	return m, nil
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
