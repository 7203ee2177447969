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
	CallSid        string `json:"call_sid"`
	Direction      string `json:"direction"`
	From           string `json:"from"`
	To             string `json:"to"`
	CallID         string `json:"call_id"`
	SbcCallID      string `json:"sbc_callid"`
	SipStatus      int    `json:"sip_status"`
	SipReason      string `json:"sip_reason"`
	CallStatus     Status `json:"call_status"`
	CallerID       string `json:"caller_id,omitempty"` // only a dialed leg has one in jambonz
	AccountSid     string `json:"account_sid"`
	TraceID        string `json:"trace_id"`
	ApplicationSid string `json:"application_sid,omitempty"`
	FsSipAddress   string `json:"fs_sip_address"`
	ParentCallSid  string `json:"parent_call_sid,omitempty"`
	// OriginatingSipIP and OriginatingSipTrunkName are where an inbound call came
	// from (the INVITE's X-Forwarded-For and X-Originating-Carrier).
	OriginatingSipIP        string `json:"originating_sip_ip,omitempty"`
	OriginatingSipTrunkName string `json:"originating_sip_trunk_name,omitempty"`
	// CallerName is the display name of the INVITE's From; only the inbound call
	// hook carries it (caller_name).
	CallerName string `json:"-"`
	// CallTerminationBy says who ended the call: "caller" (a BYE or a CANCEL) or
	// "jambonz" (the node hung up), once it ended.
	CallTerminationBy string         `json:"call_termination_by,omitempty"`
	Duration          *int           `json:"duration,omitempty"` // seconds, once completed
	CustomerData      map[string]any `json:"customerData,omitempty"`
	// EnvVars are the application's environment variables (env_vars): the call
	// hook (or session:new) carries them, as jambonz sends an application's, and no
	// later hook does. Options.Application.EnvVars, when set, wins.
	EnvVars map[string]any `json:"env_vars,omitempty"`
}

// Fields returns the call info as a fresh map, as every hook and status notification
// carries it (a hook adds its own keys): what a node keeps to notify the end of a
// call it could not finish (a crash).
func (ci *CallInfo) Fields() map[string]any { return ci.fields() }

// WithDefaults returns the call info a call of ci runs with (what Run does with
// Options.Call): the identifiers generated when empty (CallSid, CallID, SbcCallID,
// TraceID), AccountSid set to a placeholder when empty, From and To defaulted,
// Direction inbound unless it is outbound, an inbound call's OriginatingSipIP set to
// a documentation address (192.0.2.1) when empty, an inbound call's
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
	if info.Direction == "inbound" {
		fill(&info.OriginatingSipIP, "192.0.2.1")
	}
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
		"account_sid":    ci.AccountSid,
		"trace_id":       ci.TraceID,
		"fs_sip_address": ci.FsSipAddress,
	}
	if ci.ApplicationSid != "" {
		m["application_sid"] = ci.ApplicationSid // none: an outbound call with an inline call_hook
	}
	if ci.CallerID != "" {
		m["caller_id"] = ci.CallerID
	}
	if ci.ParentCallSid != "" {
		m["parent_call_sid"] = ci.ParentCallSid
	}
	if ci.OriginatingSipIP != "" {
		m["originating_sip_ip"] = ci.OriginatingSipIP
	}
	if ci.OriginatingSipTrunkName != "" {
		m["originating_sip_trunk_name"] = ci.OriginatingSipTrunkName
	}
	if ci.CallTerminationBy != "" {
		m["call_termination_by"] = ci.CallTerminationBy
	}
	if ci.Duration != nil {
		m["duration"] = *ci.Duration
	}
	if len(ci.CustomerData) > 0 {
		m["customerData"] = ci.CustomerData
	}
	return m
}
