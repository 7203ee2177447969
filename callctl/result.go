package callctl

import (
	"encoding/json"
	"time"
)

// Reasons a call ended (Result.Reason, and the reason of the call.end event).
const (
	ReasonAppHangup        = "hangup-verb"         // the application's hangup verb
	ReasonVerbsExhausted   = "verbs-exhausted"     // an HTTP application's verbs ran out
	ReasonCallerHangup     = "caller-hangup"       // the caller hung up (Script.HangupAfter)
	ReasonAppClosed        = "app-closed"          // a WebSocket application closed with 1000 and its verbs ran out
	ReasonIdle             = "idle-limit"          // a WebSocket call waited too long for a command
	ReasonDeclined         = "sip-decline"         // the sip:decline verb
	ReasonCallHookFailed   = "call-hook-failed"    // the initial HTTP hook failed: call rejected
	ReasonInvalidPayload   = "invalid-app-payload" // the initial verbs were invalid: call rejected
	ReasonConnectFailed    = "ws-connect-failed"   // the WebSocket could not be opened
	ReasonSessionFailed    = "session-new-failed"  // session:new got no ack
	ReasonReconnectFailed  = "reconnect-failed"    // a mid-call drop could not be repaired
	ReasonMaxDuration      = "max-duration"        // Options.MaxDuration passed
	ReasonMaxRequests      = "max-requests"        // Options.MaxRequests requests were sent
	ReasonMaxEvents        = "max-events"          // the timeline reached Options.MaxEvents
	ReasonCanceled         = "canceled"            // the context ended
	ReasonRedirectFailed   = "redirect-failed"     // the redirect verb's hook failed or answered invalid verbs
	ReasonActionHookFailed = "action-hook-failed"  // an actionHook whose failure jambonz's task does not catch (llm) failed or answered invalid verbs
	ReasonNotAnswered      = "not-answered"        // an outbound call's far end was busy, did not answer or failed (Script.Answer)
)

// Result is what a call did.
type Result struct {
	CallSid string
	// Status is the final call status, Reason why it ended, SIPStatus the final
	// SIP status of the call (200 for an answered call).
	Status    Status
	Reason    string
	SIPStatus int
	// Answered reports whether the call was answered.
	Answered bool
	// Duration is the simulated length of the call.
	Duration time.Duration
	// Timeline lists every event in order.
	Timeline []Event
	Alerts   []Alert
	// Compat are the compat warnings of the call, in order: where the call did
	// what jambonz does and that would silently hurt the application (KindCompat).
	Compat []Compat
	// Verbs are the names of the verbs executed, in order.
	Verbs []string
	// Hooks are the hooks requested (the path of an HTTP hook URL, the hook name of
	// a WebSocket verb:hook), one per request, in order; CallHook is first for HTTP.
	Hooks []string
	// HookLatencies are the real durations of every HTTP hook attempt and WebSocket
	// request/ack round trip.
	HookLatencies []time.Duration
	// Requests are what the application received, in order: every HTTP hook
	// (attempts and all) and every WebSocket message sent, the first
	// maxRecordedRequests of them.
	Requests []Request
	// Commands are the commands a WebSocket application sent, in order, the first
	// maxRecordedRequests of them.
	Commands []Command
	// Spoken is what the agent said, in order: say verbs, streamed tokens, an LLM's
	// turns, a bot's replies.
	Spoken []Spoken
	// ToolCalls are the tool calls of llm verbs and the outputs the application
	// returned; LLMUpdates its llm:update commands.
	ToolCalls  []ToolCall
	LLMUpdates []LLMUpdate
}

// Command is a command a WebSocket application sent (Result.Commands).
type Command struct {
	// Name is the command ("redirect", "llm:tool-output", "tts:tokens" ...).
	Name string
	// Data is its data; ToolCallID and CallSid the fields beside it.
	Data       json.RawMessage
	ToolCallID string
	CallSid    string
	// Event is its msg.recv line in Result.Timeline.
	Event int
}

// Request is one request the call sent the application, as the application received
// it: an HTTP hook, whatever its attempts, or a WebSocket message.
type Request struct {
	// Transport is "http" or "websocket", as on the timeline.
	Transport string
	// Type is a WebSocket message's type (session:new, verb:hook, call:status ...);
	// empty for HTTP.
	Type string
	// Hook names the request as Result.Hooks does: an HTTP hook's URL path; a
	// WebSocket message's hook, the application URL's path for session:new and
	// session:reconnect, empty for the others.
	Hook string
	// Method is an HTTP hook's method, POST or GET; empty for WebSocket.
	Method string
	// Payload is what was sent: an HTTP hook's fields (its JSON body, or a GET's
	// query), a WebSocket message's data.
	Payload map[string]any
	// Answered reports that the application answered: with any HTTP status, or with
	// an ack. AnswerTime is how long that answer took: the last answered attempt of
	// an HTTP hook, a WebSocket message's round trip to its ack.
	Answered   bool
	AnswerTime time.Duration
	// Event is the index in Result.Timeline of the request's first line: its first
	// hook.attempt (or fault), its msg.sent.
	Event int
	// HookIndex is the request's place in Result.Hooks, -1 when it is not listed
	// there (status notifications of a WebSocket app, verb:status, jambonz:error,
	// session:reconnect).
	HookIndex int
}

// maxRecordedRequests bounds Result.Requests: enough for any call a scenario checks,
// while a call stuck in a loop of hooks keeps a bounded record.
const maxRecordedRequests = 1000

// addRequest records a request sent to the application and returns its index, or -1
// once maxRecordedRequests were recorded.
func (r *Result) addRequest(q Request) int {
	if len(r.Requests) >= maxRecordedRequests {
		return -1
	}
	r.Requests = append(r.Requests, q)
	return len(r.Requests) - 1
}

// answered notes the answer to request i (from addRequest).
func (r *Result) answered(i int, d time.Duration) {
	if i >= 0 && i < len(r.Requests) {
		r.Requests[i].Answered, r.Requests[i].AnswerTime = true, d
	}
}

// Failed reports whether the call failed: its final status is failed (rejected, or
// hung up before it was answered), it never connected, it ended by a connection
// failure, or it was canceled. A call the application declined as busy or no-answer
// did not fail.
func (r *Result) Failed() bool {
	if r.Status == StatusFailed {
		return true
	}
	switch r.Reason {
	case ReasonCallHookFailed, ReasonInvalidPayload, ReasonConnectFailed, ReasonSessionFailed,
		ReasonReconnectFailed, ReasonCanceled:
		return true
	}
	return false
}
