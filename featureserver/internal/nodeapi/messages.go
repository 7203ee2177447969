package nodeapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// Messages and RecentCalls, as jambonz-api-server answers them (lib/routes/api/
// accounts.js POST /:sid/Messages, lib/routes/api/recent-calls.js), for the official
// clients' messages.create and recentCalls.list.

type createMessageInput struct {
	AccountParams
	Body struct {
		From string `json:"from" doc:"Calling number (required)"`
		To   string `json:"to" doc:"Called number (required)"`
		Text string `json:"text,omitempty"`
		// Media is a URL, or several (the message verb's string|array).
		Media      any    `json:"media,omitempty" doc:"A media URL or a list of them"`
		Carrier    string `json:"carrier,omitempty"`
		ActionHook any    `json:"actionHook,omitempty" doc:"Receives the message's status (message_sid, message_status ...): a URL or {url}"`
		Provider   string `json:"provider,omitempty" doc:"Accepted and ignored (jambonz's schema names it; its message verb refuses it)"`
	}
}

type createMessageOutput struct {
	Body struct {
		Sid             string         `json:"sid"`
		CarrierResponse map[string]any `json:"carrierResponse"`
	}
}

// simulatedCarrier names the carrier of a simulated message.
const simulatedCarrier = "switchboard"

func (a *API) registerMessages(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "create-message", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Messages",
		Summary: "Send an SMS message (simulated: recorded, its actionHook told success)", MaxBodyBytes: maxRequestBody,
		// jambonz's swagger and its official clients say 201; its api-server relays
		// the feature server's 200, which @jambonz/node-client's messages.create
		// throws on. We follow the documented intent (docs/compatibility.md).
		DefaultStatus: http.StatusCreated,
		Errors:        []int{http.StatusBadRequest},
	}, func(ctx context.Context, acct nodestore.Account, in *createMessageInput) (*createMessageOutput, error) {
		b := in.Body
		// validateCreateMessage's checks and words.
		switch {
		case b.From == "":
			return nil, huma.Error400BadRequest("missing from property")
		case b.To == "":
			return nil, huma.Error400BadRequest("missing to property")
		case b.Text == "" && b.Media == nil:
			return nil, huma.Error400BadRequest("either text or media required in outbound message")
		}
		media, ok := mediaOf(b.Media)
		if !ok {
			return nil, huma.Error400BadRequest("message: property media has invalid data type, must be one of string,array")
		}
		hook, err := hookURLOf(b.ActionHook)
		if err != nil {
			return nil, err
		}
		m := nodestore.Message{MessageSid: uuid.NewString(), AccountSid: acct.Sid, From: b.From, To: b.To, Text: b.Text,
			Media: strings.Join(media, " "), Status: "success", CreatedAt: a.clock.Now().UTC()}
		if err := a.store.AddMessage(ctx, m); err != nil {
			return nil, a.internal(err)
		}
		carrierID := uuid.NewString()
		if hook != "" && a.messageStatus != nil {
			// message.js performAction: the message's own fields and the carrier's answer.
			payload := map[string]any{"message_sid": m.MessageSid, "account_sid": acct.Sid, "carrier": simulatedCarrier,
				"carrier_message_id": carrierID, "message_status": "success"}
			if err := a.messageStatus(ctx, acct, hook, payload); err != nil {
				a.log.Warn().Err(err).Str("message_sid", m.MessageSid).Msg("message actionHook not published")
			}
		}
		out := &createMessageOutput{}
		out.Body.Sid = m.MessageSid
		out.Body.CarrierResponse = map[string]any{"message_id": carrierID, "carrier": simulatedCarrier}
		return out, nil
	})
}

// mediaOf reads media: a string or a list of strings.
func mediaOf(v any) ([]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{x}, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// hookURLOf reads a hook given as a URL or {url}: it must be an absolute http(s)
// URL (a message has no application to be relative to).
func hookURLOf(v any) (string, error) {
	var url string
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		url = x
	case map[string]any:
		url, _ = x["url"].(string)
	}
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return "", huma.Error400BadRequest("actionHook must be an absolute http(s) URL")
	}
	return url, nil
}

type recentCallsInput struct {
	AccountParams
	Page      int    `query:"page" doc:"Page of results, from 1 (required)"`
	Count     int    `query:"count" doc:"Results per page, at most 500 (required)"`
	Direction string `query:"direction" enum:"inbound,outbound"`
	Answered  string `query:"answered" enum:"true,false" doc:"Only answered, or unanswered, calls"`
	Days      int    `query:"days" doc:"Only calls of the last days (1..30)"`
	Start     string `query:"start" doc:"Only calls attempted at or after (date-time)"`
	End       string `query:"end" doc:"Only calls attempted before (date-time)"`
	Filter    string `query:"filter" doc:"Caller, callee or call sid contains this"`
}

// cdr is a call detail record as jambonz's time-series stores one.
type cdr struct {
	AccountSid        string `json:"account_sid"`
	CallSid           string `json:"call_sid"`
	From              string `json:"from"`
	To                string `json:"to"`
	Answered          bool   `json:"answered"`
	SipCallID         string `json:"sip_callid"`
	SipStatus         int    `json:"sip_status"`
	Duration          int    `json:"duration"`
	AttemptedAt       int64  `json:"attempted_at"`
	AnsweredAt        int64  `json:"answered_at,omitempty"`
	TerminatedAt      int64  `json:"terminated_at"`
	TerminationReason string `json:"termination_reason"`
	Direction         string `json:"direction"`
	Host              string `json:"host"`
	RemoteHost        string `json:"remote_host"`
	Trunk             string `json:"trunk"`
}

type recentCallsOutput struct {
	Body struct {
		Total int   `json:"total"`
		Batch int   `json:"batch"`
		Page  int   `json:"page"`
		Data  []cdr `json:"data"`
	}
}

// maxRecentCalls bounds the calls a RecentCalls listing reads to count its total.
const maxRecentCalls = 10000

func (a *API) registerRecentCalls(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "list-recent-calls", Method: http.MethodGet, Path: "/v1/Accounts/{account}/RecentCalls",
		Summary: "List the account's ended calls as call detail records, newest first (jambonz's RecentCalls)",
		Errors:  []int{http.StatusBadRequest},
	}, func(ctx context.Context, acct nodestore.Account, in *recentCallsInput) (*recentCallsOutput, error) {
		if in.Page < 1 {
			return nil, huma.Error400BadRequest(`missing or invalid "page" query arg`)
		}
		if in.Count < 1 || in.Count > 500 {
			return nil, huma.Error400BadRequest(`missing or invalid "count" query arg`)
		}
		p := nodestore.ListCallsParams{AccountSid: acct.Sid, Limit: 500, Direction: in.Direction}
		switch {
		case in.Days > 0:
			p.Since = a.clock.Now().Add(-time.Duration(in.Days) * 24 * time.Hour)
		default:
			for _, bound := range []struct {
				raw string
				dst *time.Time
			}{{in.Start, &p.Since}, {in.End, &p.Until}} {
				if bound.raw == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339, bound.raw)
				if err != nil {
					return nil, huma.Error400BadRequest("start and end are date-times (RFC 3339)")
				}
				*bound.dst = t
			}
		}
		var all []cdr
		for len(all) < maxRecentCalls {
			// Through the call manager, as the Calls listing: a call that just ended
			// is listed as ended before its final record is saved, as GET Calls/{sid}
			// already shows it (the store alone would still say active).
			calls, err := a.calls.List(ctx, p)
			if err != nil {
				return nil, a.internal(err)
			}
			for _, c := range calls {
				if c.Active {
					continue // jambonz writes a CDR when a call ends
				}
				r := cdrOf(c)
				if in.Answered != "" && (in.Answered == "true") != r.Answered {
					continue
				}
				if f := in.Filter; f != "" && !strings.Contains(r.From, f) && !strings.Contains(r.To, f) && !strings.Contains(r.CallSid, f) {
					continue
				}
				all = append(all, r)
			}
			if len(calls) < p.Limit {
				break
			}
			last := calls[len(calls)-1]
			p.After = &nodestore.CallKey{CreatedAt: last.CreatedAt, Sid: last.CallSid}
		}
		out := &recentCallsOutput{}
		out.Body.Total, out.Body.Page, out.Body.Data = len(all), in.Page, []cdr{}
		if from := (in.Page - 1) * in.Count; from < len(all) {
			out.Body.Data = all[from:min(from+in.Count, len(all))]
		}
		out.Body.Batch = len(out.Body.Data)
		return out, nil
	})
}

// cdrOf is the record jambonz would have written for an ended call: answered when it
// completed, its length from creation to end.
func cdrOf(c nodestore.Call) cdr {
	r := cdr{AccountSid: c.AccountSid, CallSid: c.CallSid, From: c.From, To: c.To, SipCallID: c.CallSid, SipStatus: c.SipStatus,
		AttemptedAt: c.CreatedAt.UnixMilli(), TerminationReason: c.Reason, Direction: c.Direction, Trunk: simulatedCarrier,
		Answered: c.CallStatus == "completed"}
	end := c.CreatedAt
	if c.EndedAt != nil {
		end = *c.EndedAt
	}
	r.TerminatedAt = end.UnixMilli()
	if r.Answered {
		r.AnsweredAt = r.AttemptedAt
		r.Duration = int(end.Sub(c.CreatedAt) / time.Second)
	}
	return r
}
