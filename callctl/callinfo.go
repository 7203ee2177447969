package callctl

// Status is a call status (docs/call-control.md §8).
type Status string

// The call statuses.
const (
	StatusTrying     Status = "trying"
	StatusRinging    Status = "ringing"
	StatusEarlyMedia Status = "early-media"
	StatusInProgress Status = "in-progress"
	StatusQueued     Status = "queued"
	StatusFailed     Status = "failed"
	StatusBusy       Status = "busy"
	StatusNoAnswer   Status = "no-answer"
	StatusCompleted  Status = "completed"
)

// Final reports whether s ends a call.
func (s Status) Final() bool {
	switch s {
	case StatusFailed, StatusBusy, StatusNoAnswer, StatusCompleted:
		return true
	}
	return false
}

// CallInfo is the call's description sent with every hook and WebSocket message
// (docs/call-control.md §8). Keys are snake_case except customerData.
type CallInfo struct {
	CallSid        string         `json:"call_sid"`
	Direction      string         `json:"direction"`
	From           string         `json:"from"`
	To             string         `json:"to"`
	CallID         string         `json:"call_id"`
	SbcCallID      string         `json:"sbc_callid"`
	SipStatus      int            `json:"sip_status"`
	SipReason      string         `json:"sip_reason"`
	CallStatus     Status         `json:"call_status"`
	CallerID       string         `json:"caller_id"`
	AccountSid     string         `json:"account_sid"`
	TraceID        string         `json:"trace_id"`
	ApplicationSid string         `json:"application_sid,omitempty"`
	FsSipAddress   string         `json:"fs_sip_address"`
	ParentCallSid  string         `json:"parent_call_sid,omitempty"`
	Duration       *int           `json:"duration,omitempty"` // seconds, once completed
	CustomerData   map[string]any `json:"customerData,omitempty"`
}

// fields returns the call info as a fresh map, to which a hook adds its own keys.
func (ci *CallInfo) fields() map[string]any {
	m := map[string]any{
		"call_sid":       ci.CallSid,
		"direction":      ci.Direction,
		"from":           ci.From,
		"to":             ci.To,
		"call_id":        ci.CallID,
		"sbc_callid":     ci.SbcCallID,
		"sip_status":     ci.SipStatus,
		"sip_reason":     ci.SipReason,
		"call_status":    string(ci.CallStatus),
		"caller_id":      ci.CallerID,
		"account_sid":    ci.AccountSid,
		"trace_id":       ci.TraceID,
		"fs_sip_address": ci.FsSipAddress,
	}
	if ci.ApplicationSid != "" {
		m["application_sid"] = ci.ApplicationSid // none: an outbound call with an inline call_hook
	}
	if ci.ParentCallSid != "" {
		m["parent_call_sid"] = ci.ParentCallSid
	}
	if ci.Duration != nil {
		m["duration"] = *ci.Duration
	}
	if len(ci.CustomerData) > 0 {
		m["customerData"] = ci.CustomerData
	}
	return m
}
