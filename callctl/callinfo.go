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
	// EnvVars are the application's environment variables (env_vars), sent with the
	// call hook and session:new as jambonz sends an application's.
	EnvVars map[string]any `json:"env_vars,omitempty"`
}

// Fields returns the call info as a fresh map, as every hook and status notification
// carries it (a hook adds its own keys): what a node keeps to notify the end of a
// call it could not finish (a crash).
func (ci *CallInfo) Fields() map[string]any { return ci.fields() }

// WithDefaults returns the call info a call of ci runs with (what Run does with
// Options.Call): the identifiers generated when empty (CallSid, CallID, SbcCallID,
// TraceID), AccountSid set to a placeholder when empty, From and To defaulted,
// CallerID From, Direction inbound unless it is outbound, an inbound call's
// ApplicationSid set to a placeholder when empty (an outbound call's stays as
// given), the status trying (SIP 100).
func (ci CallInfo) WithDefaults() CallInfo {
	info := ci
	if info.Direction != "outbound" {
		info.Direction = "inbound"
	}
	fill := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	fill(&info.CallSid, newUUID())
	fill(&info.CallID, newUUID())
	fill(&info.SbcCallID, newUUID())
	fill(&info.TraceID, randomHex(16))
	fill(&info.AccountSid, "9351f46a-678c-43f5-b8a6-d4eb58d131af")
	if info.Direction == "inbound" {
		// A simulated inbound call always reached an application through the SBC;
		// an outbound call (created by REST) has the one it was created with, or
		// none for an inline call_hook, as jambonz sends it.
		fill(&info.ApplicationSid, "0dddaabf-0a30-43e3-84e8-426873b1a78b")
	}
	fill(&info.From, defaultFrom)
	fill(&info.To, defaultTo)
	fill(&info.CallerID, info.From)
	fill(&info.FsSipAddress, "127.0.0.1:5070")
	info.CallStatus = StatusTrying
	info.SipStatus = 100
	info.SipReason = "Trying"
	return info
}

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
	if len(ci.EnvVars) > 0 {
		m["env_vars"] = ci.EnvVars
	}
	return m
}
