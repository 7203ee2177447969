package callctl

import "time"

// Reasons a call ended (Result.Reason, and the reason of the call.end event).
const (
	ReasonAppHangup       = "hangup-verb"         // the application's hangup verb
	ReasonVerbsExhausted  = "verbs-exhausted"     // an HTTP application's verbs ran out
	ReasonCallerHangup    = "caller-hangup"       // the caller hung up (Script.HangupAfter)
	ReasonAppClosed       = "app-closed"          // a WebSocket application closed with 1000 and its verbs ran out
	ReasonIdle            = "idle-limit"          // a WebSocket call waited too long for a command
	ReasonDeclined        = "sip-decline"         // the sip:decline verb
	ReasonCallHookFailed  = "call-hook-failed"    // the initial HTTP hook failed: call rejected
	ReasonInvalidPayload  = "invalid-app-payload" // the initial verbs were invalid: call rejected
	ReasonConnectFailed   = "ws-connect-failed"   // the WebSocket could not be opened
	ReasonSessionFailed   = "session-new-failed"  // session:new got no ack
	ReasonReconnectFailed = "reconnect-failed"    // a mid-call drop could not be repaired
	ReasonMaxDuration     = "max-duration"        // Options.MaxDuration passed
	ReasonCanceled        = "canceled"            // the context ended
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
	// Verbs are the names of the verbs executed, in order.
	Verbs []string
	// Hooks are the hooks requested (the path of an HTTP hook URL, the hook name of
	// a WebSocket verb:hook), one per request, in order; CallHook is first for HTTP.
	Hooks []string
	// HookLatencies are the real durations of every HTTP hook attempt and WebSocket
	// request/ack round trip.
	HookLatencies []time.Duration
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
