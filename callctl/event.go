package callctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind names a timeline event. The kinds and their keys are the stable `--json`
// contract of `switchboard simulate`.
type Kind string

// The timeline event kinds.
const (
	KindCallStart   Kind = "call.start"   // From, To, Direction
	KindHookAttempt Kind = "hook.attempt" // URL, Transport, Attempt, HTTPStatus, Class, Duration
	KindHookRetry   Kind = "hook.retry"   // Delay (plus URL, Attempt of the next attempt)
	KindWSOpen      Kind = "ws.open"      // URL
	KindWSClose     Kind = "ws.close"     // Code (1006 when the connection ended without a close frame)
	KindWSReconnect Kind = "ws.reconnect" // Attempt
	KindMsgSent     Kind = "msg.sent"     // Type, MsgID, Data (the payload of the message types of voice AI)
	KindMsgRecv     Kind = "msg.recv"     // Type, MsgID, Command and Data of a command
	KindVerbStart   Kind = "verb.start"   // Verb
	KindVerbEnd     Kind = "verb.end"     // Verb
	KindCallStatus  Kind = "call.status"  // Status
	KindAlert       Kind = "alert"        // AlertType, Detail
	KindCallEnd     Kind = "call.end"     // Status, Reason, SIPStatus
	// KindCallerInput: the simulated caller answered a gather (Script.Gathers), at
	// the time the input is complete: Input is "digits" or "speech", Value the digits
	// keyed or the words said.
	KindCallerInput Kind = "caller.input"
	// KindFault: a scenario's network fault (Script.Network). At the call's start,
	// one per setting that applies to every message (Fault "latency" with Delay and
	// Jitter, "slow-app" with Delay); then one per connection attempt refused or reset
	// ("refuse", "reset"), with the URL and Attempt of its hook.attempt, just before it.
	KindFault Kind = "fault"
	// KindCompat: the call did what jambonz does where that would silently hurt the
	// application (a command before the session:new ack lost, a tag command ignored
	// ...): Rule names the behaviour, Detail what happened (compat.go).
	KindCompat Kind = "compat"
	// KindSpoken: the agent spoke to the caller (Value): a say verb's text ("say"),
	// streamed tokens once the stream spoke them ("tokens"), an LLM's turn ("llm"), a
	// bot's reply ("bot"); Input names the source.
	KindSpoken Kind = "agent.spoke"
)

// Event is one line of a call's timeline. Which fields are meaningful depends on Kind
// (see the Kind constants); MarshalJSON writes exactly the keys of the kind.
type Event struct {
	// At is the simulated time since the call started.
	At      time.Duration
	CallSid string
	Kind    Kind

	From, To, Direction string // call.start

	URL        string        // hook.attempt, hook.retry, ws.open
	Transport  string        // hook.attempt: "http" or "websocket", as fragment.Transport
	Attempt    int           // hook.attempt, hook.retry, ws.reconnect
	HTTPStatus int           // hook.attempt: the HTTP (or upgrade) status, 0 when none
	Class      string        // hook.attempt: "success" or the failure class
	Duration   time.Duration // hook.attempt: real time the attempt took
	Delay      time.Duration // hook.retry

	Code int // ws.close

	Type  string // msg.sent, msg.recv
	MsgID string // msg.sent, msg.recv
	// Command names a received command; Data is the JSON payload of a command, and
	// of a sent message of the voice-AI and dialed-leg types (llm:*, tts:*,
	// session:adulting, call:status of a dialed leg), at most maxEventData bytes.
	Command string
	Data    string

	Verb string // verb.start, verb.end

	Status    string // call.status, call.end
	Reason    string // call.end
	SIPStatus int    // call.end

	AlertType AlertType // alert
	Detail    string    // alert, compat

	Rule CompatRule // compat

	Input string // caller.input: "digits" or "speech"; agent.spoke: the source
	Value string // caller.input: the digits or the words; agent.spoke: the text

	Fault  string        // fault: latency, slow-app, refuse or reset (also URL, Attempt, Delay)
	Jitter time.Duration // fault: the latency's jitter
}

// MarshalJSON writes t_ms, call_sid, kind and the keys of the kind, in that order.
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"t_ms":`)
	b.WriteString(strconv.FormatInt(e.At.Milliseconds(), 10))
	// Strings are written as they are, without json.Marshal's HTML escaping: a say's
	// SSML or an app URL's #rc=..&rp=.. fragment reads "<speak>" and "&", not
	// "\u003cspeak\u003e" and "\u0026" (a writer must not escape again: see
	// cmd/switchboard/internal/simulation's timelineWriter).
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	str := func(k, v string) {
		b.WriteString(`,"` + k + `":`)
		_ = enc.Encode(v)       // a string always encodes
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	num := func(k string, v int64) {
		b.WriteString(`,"` + k + `":` + strconv.FormatInt(v, 10))
	}
	// delayedAttempt writes the attempt a retry or a fault delays, and by how much.
	delayedAttempt := func() {
		str("url", e.URL)
		num("attempt", int64(e.Attempt))
		num("delay_ms", e.Delay.Milliseconds())
	}
	str("call_sid", e.CallSid)
	str("kind", string(e.Kind))
	switch e.Kind {
	case KindCallStart:
		str("from", e.From)
		str("to", e.To)
		str("direction", e.Direction)
	case KindHookAttempt:
		str("url", e.URL)
		str("transport", e.Transport)
		num("attempt", int64(e.Attempt))
		num("status", int64(e.HTTPStatus))
		str("class", e.Class)
		num("duration_ms", e.Duration.Milliseconds())
	case KindHookRetry:
		delayedAttempt()
	case KindWSOpen:
		str("url", e.URL)
	case KindWSClose:
		num("code", int64(e.Code))
	case KindWSReconnect:
		num("attempt", int64(e.Attempt))
	case KindMsgSent, KindMsgRecv:
		str("type", e.Type)
		str("msgid", e.MsgID)
		if e.Command != "" {
			str("command", e.Command)
		}
		if e.Data != "" {
			b.WriteString(`,"data":`)
			b.WriteString(e.Data)
		}
	case KindSpoken:
		str("source", e.Input)
		str("text", e.Value)
	case KindVerbStart, KindVerbEnd:
		str("verb", e.Verb)
	case KindCallStatus:
		str("status", e.Status)
	case KindAlert:
		str("type", string(e.AlertType))
		str("detail", e.Detail)
	case KindCallEnd:
		str("status", e.Status)
		str("reason", e.Reason)
		num("sip_status", int64(e.SIPStatus))
	case KindCallerInput:
		str("input", e.Input)
		str("value", e.Value)
	case KindFault:
		str("fault", e.Fault)
		delayedAttempt()
		num("jitter_ms", e.Jitter.Milliseconds())
	case KindCompat:
		str("rule", string(e.Rule))
		str("detail", e.Detail)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// String renders the event for people: "  1.234s  verb.start  say".
func (e Event) String() string {
	var what string
	switch e.Kind {
	case KindCallStart:
		what = fmt.Sprintf("%s call from %s to %s", e.Direction, e.From, e.To)
	case KindHookAttempt:
		status := "no response"
		if e.HTTPStatus != 0 {
			status = strconv.Itoa(e.HTTPStatus)
		}
		what = fmt.Sprintf("%s %s attempt %d: %s (%s) in %dms", e.Transport, e.URL, e.Attempt, status, e.Class, e.Duration.Milliseconds())
	case KindHookRetry:
		what = fmt.Sprintf("retry %s in %s (attempt %d)", e.URL, e.Delay, e.Attempt)
	case KindWSOpen:
		what = "connected to " + e.URL
	case KindWSClose:
		what = fmt.Sprintf("closed with code %d", e.Code)
	case KindWSReconnect:
		what = fmt.Sprintf("reconnect attempt %d", e.Attempt)
	case KindMsgSent:
		what = "→ " + e.Type + msgIDSuffix(e.MsgID) + dataSuffix(e.Data)
	case KindMsgRecv:
		what = "← " + strings.TrimSpace(e.Type+" "+e.Command) + msgIDSuffix(e.MsgID) + dataSuffix(e.Data)
	case KindSpoken:
		what = fmt.Sprintf("the agent says %q (%s)", e.Value, e.Input)
	case KindVerbStart, KindVerbEnd:
		what = e.Verb
	case KindCallStatus:
		what = e.Status
	case KindAlert:
		what = string(e.AlertType) + ": " + e.Detail
	case KindCallEnd:
		what = fmt.Sprintf("%s (%s), SIP %d", e.Status, e.Reason, e.SIPStatus)
	case KindFault:
		switch e.Fault {
		case "latency":
			what = fmt.Sprintf("latency %s ± %s on every message, each way", e.Delay, e.Jitter)
		case "slow-app":
			what = fmt.Sprintf("the app's answers arrive %s late", e.Delay)
		default:
			what = fmt.Sprintf("%s: connection of attempt %d to %s", map[string]string{"refuse": "refused", "reset": "reset"}[e.Fault], e.Attempt, e.URL)
		}
	case KindCompat:
		what = string(e.Rule) + ": " + e.Detail
	case KindCallerInput:
		if e.Input == "speech" {
			what = fmt.Sprintf("the caller says %q", e.Value)
		} else {
			what = "the caller keys " + e.Value
		}
	}
	return fmt.Sprintf("%9.3fs  %-12s  %s", e.At.Seconds(), e.Kind, what)
}

// maxEventData bounds the payload a msg event keeps (Event.Data); a longer one is
// kept as its first bytes in a JSON string, marked cut.
const maxEventData = 4096

// eventData is the Data of a msg event for payload v.
func eventData(v any) string {
	var b []byte
	switch x := v.(type) {
	case nil:
		return ""
	case json.RawMessage:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return ""
		}
	}
	if len(b) > maxEventData {
		cut, _ := json.Marshal(map[string]string{"cut": string(b[:maxEventData])})
		return string(cut)
	}
	return string(b)
}

// dataSuffix shows a message's payload in a timeline line, shortened.
func dataSuffix(data string) string {
	const show = 160
	if data == "" {
		return ""
	}
	if len(data) > show {
		data = data[:show] + "…"
	}
	return " " + data
}

func msgIDSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " (" + id + ")"
}
