package nodeapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/internal/calls"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// CallView is a call as the API shows it: its record (the `simulate --json` events in
// its timeline).
type CallView nodestore.Call

type createCallInput struct {
	AccountParams
	Body struct {
		ApplicationSid string         `json:"application_sid,omitempty" maxLength:"64" doc:"Application to run; or give call_hook"`
		CallHook       *hookBody      `json:"call_hook,omitempty" doc:"Inline application (instead of application_sid)"`
		CallStatusHook *hookBody      `json:"call_status_hook,omitempty" doc:"Inline status hook"`
		From           string         `json:"from" minLength:"1" maxLength:"256"`
		To             string         `json:"to" minLength:"1" maxLength:"256"`
		Tag            map[string]any `json:"tag,omitempty" doc:"customerData for the call's hooks"`
		Scenario       map[string]any `json:"scenario,omitempty" doc:"Caller and network script, same format as switchboard simulate --scenario"`
	}
}

type createCallOutput struct {
	Body struct {
		CallSid string `json:"call_sid"`
	}
}

type callInput struct {
	AccountParams
	CallSid     string `path:"call_sid" maxLength:"64"`
	ForwardedBy string `header:"Switchboard-Forwarded-By" maxLength:"256" doc:"Set by a node that forwards the request to the node running the call; that node does not forward it again"`
}

type callOutput struct {
	Body CallView
}

type listCallsInput struct {
	AccountParams
	Limit int `query:"limit" minimum:"1" maximum:"1000" default:"100"`
}

type listCallsOutput struct {
	Body []CallView
}

type updateCallInput struct {
	AccountParams
	CallSid     string `path:"call_sid" maxLength:"64"`
	ForwardedBy string `header:"Switchboard-Forwarded-By" maxLength:"256" doc:"Set by a node that forwards the request to the node running the call; that node does not forward it again"`
	Body        struct {
		CallHook   *hookBody `json:"call_hook,omitempty" doc:"Redirect the call to a new application URL"`
		CallStatus string    `json:"call_status,omitempty" enum:"completed" doc:"completed hangs up the call"`
		MuteStatus string    `json:"mute_status,omitempty" enum:"mute,unmute"`
	}
}

type acceptedOutput struct {
	Body struct {
		CallSid string `json:"call_sid"`
		Status  string `json:"status"`
	}
}

func (a *API) registerCalls(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "create-call", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Calls",
		Summary: "Start a simulated inbound call", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *createCallInput) (*createCallOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		req, err := a.callRequest(ctx, acct, in)
		if err != nil {
			return nil, err
		}
		sid, err := a.calls.Start(req)
		switch {
		case errors.Is(err, calls.ErrDraining):
			return nil, huma.Error503ServiceUnavailable("the node is shutting down")
		case errors.Is(err, calls.ErrTooManyCalls):
			return nil, huma.Error503ServiceUnavailable("too many active calls")
		case err != nil:
			return nil, a.internal(err)
		}
		out := &createCallOutput{}
		out.Body.CallSid = sid
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "list-calls", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Calls",
		Summary: "List calls, active first, then newest first",
	}, func(ctx context.Context, in *listCallsInput) (*listCallsOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		list, err := a.calls.List(ctx, acct.Sid, in.Limit)
		if err != nil {
			return nil, a.internal(err)
		}
		out := &listCallsOutput{Body: make([]CallView, len(list))}
		for i, c := range list {
			out.Body[i] = CallView(c)
		}
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "get-call", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Read a call: its state and timeline (the simulate --json events)",
	}, func(ctx context.Context, in *callInput) (*callOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		v, err := a.calls.Get(ctx, acct.Sid, in.CallSid)
		if err != nil {
			return nil, a.notFoundOr(err, "call")
		}
		if v.Active && v.Node != "" && v.Node != a.node && in.ForwardedBy == "" {
			// Running on another node: its state and timeline as they are now, from
			// that node; the shared record (saved at start and answer) otherwise.
			if live, ok := a.forwardGet(ctx, acct, in); ok {
				return &callOutput{Body: live}, nil
			}
		}
		return &callOutput{Body: CallView(v)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "update-call", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Control a live call: redirect, hang up, mute", DefaultStatus: http.StatusAccepted, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *updateCallInput) (*acceptedOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		return a.updateCall(ctx, acct, in)
	})
}

// callRequest validates a create-call body into a CallRequest; nothing is started.
func (a *API) callRequest(ctx context.Context, acct nodestore.Account, in *createCallInput) (calls.Request, error) {
	b := &in.Body
	req := calls.Request{Account: acct, ApplicationSid: b.ApplicationSid, From: b.From, To: b.To, Tag: b.Tag}
	switch {
	case b.ApplicationSid != "" && b.CallHook != nil:
		return req, huma.Error422UnprocessableEntity("give application_sid or call_hook, not both")
	case b.ApplicationSid != "":
		app, err := a.store.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: acct.Sid, Sid: b.ApplicationSid})
		if err != nil {
			if errors.Is(err, nodestore.ErrNotFound) {
				return req, huma.Error422UnprocessableEntity("application_sid: no such application")
			}
			return req, a.internal(err)
		}
		req.CallHook, req.CallStatusHook = app.CallHook, app.CallStatusHook
	case b.CallHook != nil:
		hook, err := b.CallHook.spec("call_hook", true)
		if err != nil {
			return req, err
		}
		req.CallHook = hook
	default:
		return req, huma.Error422UnprocessableEntity("application_sid or call_hook is required")
	}
	if b.CallStatusHook != nil {
		status, err := b.CallStatusHook.spec("call_status_hook", false)
		if err != nil {
			return req, err
		}
		req.CallStatusHook = &status
	}
	if b.Scenario != nil {
		script, expect, err := parseScenario(b.Scenario)
		if err != nil {
			return req, huma.Error422UnprocessableEntity("invalid scenario", &huma.ErrorDetail{Location: "body.scenario", Message: err.Error()})
		}
		req.Script, req.Expect = script, expect
	}
	return req, nil
}

func (a *API) updateCall(ctx context.Context, acct nodestore.Account, in *updateCallInput) (*acceptedOutput, error) {
	b := &in.Body
	set := 0
	for _, given := range []bool{b.CallHook != nil, b.CallStatus != "", b.MuteStatus != ""} {
		if given {
			set++
		}
	}
	if set != 1 {
		return nil, huma.Error422UnprocessableEntity("give exactly one of call_hook, call_status, mute_status")
	}
	var err error
	status := ""
	switch {
	case b.CallStatus == "completed":
		err, status = a.calls.Hangup(acct.Sid, in.CallSid), "hanging up"
	case b.CallHook != nil:
		hook, herr := b.CallHook.spec("call_hook", true)
		if herr != nil {
			return nil, herr
		}
		err, status = a.calls.Redirect(acct.Sid, in.CallSid, hook), "redirecting"
	default:
		err, status = a.calls.Mute(acct.Sid, in.CallSid, b.MuteStatus == "mute"), b.MuteStatus
	}
	switch {
	case errors.Is(err, nodestore.ErrNotFound) && in.ForwardedBy == "":
		// Not running here: perhaps on another node sharing the database.
		return a.forwardUpdate(ctx, acct, in)
	case errors.Is(err, nodestore.ErrNotFound):
		return nil, huma.Error404NotFound("call not found or no longer active")
	case errors.Is(err, calls.ErrCallEnded):
		return nil, huma.Error409Conflict("the call has ended")
	case errors.Is(err, calls.ErrControlBacklog):
		return nil, huma.Error429TooManyRequests("the call has not applied earlier commands yet")
	case err != nil:
		return nil, a.internal(err)
	}
	out := &acceptedOutput{}
	out.Body.CallSid, out.Body.Status = in.CallSid, status
	return out, nil
}
