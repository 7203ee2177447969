package nodeapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/callctl"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// CallView is a call as the API shows it: its record (the `simulate --json` events in
// its timeline).
type CallView nodestore.Call

type createCallInput struct {
	AccountParams
	Body createCallBody
}

// createCallBody is jambonz's create-call payload. The fields it has for media and
// SIP, which a simulating node cannot honour, are accepted and ignored, as the
// docs say per field; any other field is refused.
type createCallBody struct {
	ApplicationSid string         `json:"application_sid,omitempty" maxLength:"64" doc:"Application to run: its call hook, status hook and speech settings replace those given here (as jambonz's API does, warned on the call). Without it, call_hook and the five speech settings are required (400)"`
	CallHook       *hookRef       `json:"call_hook,omitempty" doc:"Inline application (without application_sid): a URL or a webhook object"`
	CallStatusHook *hookRef       `json:"call_status_hook,omitempty" doc:"With call_hook: the status hook, a URL or a webhook object (http(s) or ws(s)), relative to call_hook"`
	From           string         `json:"from" minLength:"1" maxLength:"256"`
	To             callTo         `json:"to" doc:"Where the call goes: a jambonz target object (or a phone number)"`
	Tag            map[string]any `json:"tag,omitempty" doc:"customerData for the call's hooks"`
	Scenario       map[string]any `json:"scenario,omitempty" doc:"Caller and network script, same format as switchboard simulate --scenario"`

	AnswerOnBridge             bool           `json:"answerOnBridge,omitempty" doc:"Accepted, ignored: the node places no SIP call"`
	FromHost                   string         `json:"fromHost,omitempty" maxLength:"256" doc:"Accepted, ignored"`
	Timeout                    int            `json:"timeout,omitempty" minimum:"0" doc:"Seconds the call rings before it is canceled as no-answer (default 60); the scenario's answer says when the far end answers"`
	TimeLimit                  int            `json:"timeLimit,omitempty" minimum:"0" doc:"Accepted, ignored"`
	Headers                    map[string]any `json:"headers,omitempty" doc:"Accepted, ignored: SIP headers"`
	SipRequestWithinDialogHook string         `json:"sipRequestWithinDialogHook,omitempty" maxLength:"2048" doc:"Accepted, ignored: no SIP dialog"`
	CallerName                 string         `json:"callerName,omitempty" maxLength:"256" doc:"Accepted, ignored"`
	SpeechSynthesisVendor      string         `json:"speech_synthesis_vendor,omitempty" maxLength:"64" doc:"Required with call_hook: the call hook's defaults.synthesizer.vendor"`
	SpeechSynthesisLanguage    string         `json:"speech_synthesis_language,omitempty" maxLength:"64" doc:"Required with call_hook: defaults.synthesizer.language"`
	SpeechSynthesisVoice       string         `json:"speech_synthesis_voice,omitempty" maxLength:"128" doc:"Required with call_hook: defaults.synthesizer.voice"`
	SpeechRecognizerVendor     string         `json:"speech_recognizer_vendor,omitempty" maxLength:"64" doc:"Required with call_hook: defaults.recognizer.vendor"`
	SpeechRecognizerLanguage   string         `json:"speech_recognizer_language,omitempty" maxLength:"64" doc:"Required with call_hook: defaults.recognizer.language"`
}

type createCallOutput struct {
	Body struct {
		Sid     string `json:"sid" doc:"The call's sid (what @jambonz/node-client returns)"`
		CallSid string `json:"call_sid" doc:"The same sid"`
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
	Limit     int       `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Most calls in the page"`
	Cursor    string    `query:"cursor" maxLength:"200" doc:"Continue a listing: the X-Next-Cursor of the page before"`
	Status    string    `query:"status" enum:"trying,ringing,early-media,in-progress,queued,failed,busy,no-answer,completed" doc:"Only calls of this call_status (as last recorded)"`
	Direction string    `query:"direction" enum:"inbound,outbound" doc:"Only calls of this direction"`
	Since     time.Time `query:"since" doc:"Only calls created at or after this time (RFC 3339)"`
	Until     time.Time `query:"until" doc:"Only calls created before this time (RFC 3339)"`
}

type listCallsOutput struct {
	NextCursor string `header:"X-Next-Cursor" doc:"The cursor of the next page; absent on the last"`
	Link       string `header:"Link" doc:"The next page, rel=next (RFC 8288); absent on the last"`
	Body       []CallView
}

type updateCallInput struct {
	AccountParams
	CallSid     string `path:"call_sid" maxLength:"64"`
	ForwardedBy string `header:"Switchboard-Forwarded-By" maxLength:"256" doc:"Set by a node that forwards the request to the node running the call; that node does not forward it again"`
	Body        updateCallBody
}

// updateCallBody is jambonz's live call control. What acts on media the node
// simulates (whisper, listen, conference, recording, dubbing) is accepted as jambonz
// accepts it and recorded on the call (a whisper outside a dial is warned, as jambonz
// ignores it); a SIP request, whose answer jambonz returns, is refused.
type updateCallBody struct {
	CallHook       *hookRef `json:"call_hook,omitempty" doc:"Redirect: a URL (absolute, or relative to the call's application) or a webhook object"`
	CallStatusHook *hookRef `json:"call_status_hook,omitempty" doc:"With call_hook only; jambonz then ignores it, as the call does (a compat warning)"`
	CallStatus     string   `json:"call_status,omitempty" enum:"completed,no-answer" doc:"completed hangs up the call; no-answer cancels a call not yet answered"`
	MuteStatus     string   `json:"mute_status,omitempty" enum:"mute,unmute"`
	Whisper        any      `json:"whisper,omitempty" doc:"Say or play verbs to the parties of a dial in progress; ignored otherwise, as jambonz ignores it (a compat warning)"`

	ChildCallHook               *hookRef `json:"child_call_hook,omitempty" doc:"Moves the dialed leg of a dial in progress to this application (session:redirect with the leg's details; the leg leaves the call)"`
	ConfMuteStatus              any      `json:"conf_mute_status,omitempty" doc:"Accepted and recorded: conferences are simulated"`
	ConfHoldStatus              any      `json:"conf_hold_status,omitempty" doc:"Accepted and recorded: conferences are simulated"`
	ListenStatus                any      `json:"listen_status,omitempty" doc:"Accepted and recorded: media streams are simulated"`
	SipRequest                  any      `json:"sip_request,omitempty" doc:"Refused: jambonz answers with the SIP response, which a simulated call has none of"`
	Record                      any      `json:"record,omitempty" doc:"Accepted and recorded: no recording"`
	Dub                         any      `json:"dub,omitempty" doc:"Accepted and recorded: media is simulated"`
	MediaPath                   any      `json:"media_path,omitempty" doc:"Accepted and recorded: media is simulated"`
	ConferenceParticipantAction any      `json:"conferenceParticipantAction,omitempty" doc:"Accepted and recorded: conferences are simulated"`
}

// refused names the fields of b the node cannot carry out.
func (b *updateCallBody) refused() (field, why string) {
	if b.SipRequest != nil {
		return "sip_request", "jambonz answers with the SIP response, and a simulated call has no SIP dialog"
	}
	return "", ""
}

// mediaUpdate names the field of b that acts on simulated media, "" when none.
func (b *updateCallBody) mediaUpdate() string {
	for _, f := range []struct {
		given bool
		name  string
	}{
		{b.Whisper != nil, "whisper"}, {b.ConfMuteStatus != nil, "conf_mute_status"}, {b.ConfHoldStatus != nil, "conf_hold_status"},
		{b.ListenStatus != nil, "listen_status"}, {b.Record != nil, "record"}, {b.Dub != nil, "dub"}, {b.MediaPath != nil, "media_path"},
		{b.ConferenceParticipantAction != nil, "conferenceParticipantAction"},
	} {
		if f.given {
			return f.name
		}
	}
	return ""
}

type acceptedOutput struct {
	Body struct {
		CallSid string `json:"call_sid"`
		Status  string `json:"status"`
	}
}

func (a *API) registerCalls(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "create-call", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Calls",
		Summary: "Start a call (outbound, simulated)", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
		Errors: []int{http.StatusBadRequest, http.StatusServiceUnavailable},
	}, func(ctx context.Context, acct nodestore.Account, in *createCallInput) (*createCallOutput, error) {
		req, err := a.callRequest(ctx, acct, in)
		if err != nil {
			return nil, err
		}
		sid, err := a.calls.Start(ctx, req)
		switch {
		case errors.Is(err, calls.ErrDraining):
			return nil, huma.Error503ServiceUnavailable("the node is shutting down")
		case errors.Is(err, calls.ErrTooManyCalls):
			return nil, huma.Error503ServiceUnavailable("too many active calls")
		case errors.Is(err, calls.ErrUnwritable):
			// The reason (the file deleted, read-only, full) is the operator's to fix,
			// in the node's log: the answer shows no path nor driver error.
			return nil, huma.Error503ServiceUnavailable(calls.ErrUnwritable.Error())
		case err != nil:
			return nil, a.internal(err)
		}
		out := &createCallOutput{}
		out.Body.Sid, out.Body.CallSid = sid, sid
		return out, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "list-calls", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Calls",
		Summary: "List calls, newest first, a page at a time (X-Next-Cursor, Link rel=next)",
	}, func(ctx context.Context, acct nodestore.Account, in *listCallsInput) (*listCallsOutput, error) {
		p := nodestore.ListCallsParams{AccountSid: acct.Sid, Limit: in.Limit + 1, Status: in.Status, Direction: in.Direction, Since: in.Since, Until: in.Until}
		if in.Cursor != "" {
			key, err := decodeCursor(in.Cursor)
			if err != nil {
				return nil, huma.Error422UnprocessableEntity("invalid cursor", &huma.ErrorDetail{Location: "query.cursor", Message: err.Error(), Value: in.Cursor})
			}
			p.After = &key
		}
		list, err := a.calls.List(ctx, p)
		if err != nil {
			return nil, a.internal(err)
		}
		out := &listCallsOutput{}
		if len(list) > in.Limit {
			list = list[:in.Limit]
			last := list[len(list)-1]
			out.NextCursor = encodeCursor(nodestore.CallKey{CreatedAt: last.CreatedAt, Sid: last.CallSid})
			out.Link = "<" + nextPageURL(acct.Sid, in, out.NextCursor) + `>; rel="next"`
		}
		out.Body = viewsOf(list, func(c nodestore.Call) CallView { return CallView(c) })
		return out, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "get-call", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Read a call: its state and timeline (the simulate --json events)",
	}, func(ctx context.Context, acct nodestore.Account, in *callInput) (*callOutput, error) {
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
	// PUT answers as jambonz documents UPDATE: 204, no body. The deprecated POST
	// keeps its 202 and body, which callers of it read.
	registerForAccount(a, api, huma.Operation{
		OperationID: "update-call", Method: http.MethodPut, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Control a live call: redirect, hang up, no-answer, mute", DefaultStatus: http.StatusNoContent, MaxBodyBytes: maxRequestBody,
		Errors: []int{http.StatusConflict},
	}, func(ctx context.Context, acct nodestore.Account, in *updateCallInput) (*struct{}, error) {
		if _, err := a.updateCall(ctx, acct, in); err != nil {
			return nil, err
		}
		return nil, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "update-call-post", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Control a live call (POST, as jambonz still takes it)", DefaultStatus: http.StatusAccepted, MaxBodyBytes: maxRequestBody,
		Errors: []int{http.StatusConflict}, Deprecated: true,
	}, a.updateCall)
	registerForAccount(a, api, huma.Operation{
		OperationID: "delete-call", Method: http.MethodDelete, Path: "/v1/Accounts/{account}/Calls/{call_sid}",
		Summary: "Delete a call's record; an active call is hung up first", DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, acct nodestore.Account, in *callInput) (*struct{}, error) {
		if in.ForwardedBy == "" {
			if handled, err := a.forwardDelete(ctx, acct, in); handled {
				return nil, err
			}
		}
		if err := a.calls.Delete(ctx, acct.Sid, in.CallSid); err != nil {
			return nil, a.notFoundOr(err, "call")
		}
		return nil, nil
	})
}

// encodeCursor writes a listing's place as an opaque token: the creation
// millisecond and sid of the last call of a page.
func encodeCursor(k nodestore.CallKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.CreatedAt.UnixMilli(), 10) + "." + k.Sid))
}

func decodeCursor(s string) (nodestore.CallKey, error) {
	bad := errors.New("not a cursor of this API: use the X-Next-Cursor of a listing")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nodestore.CallKey{}, bad
	}
	ms, sid, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || sid == "" || n < 0 {
		return nodestore.CallKey{}, bad
	}
	return nodestore.CallKey{CreatedAt: time.UnixMilli(n).UTC(), Sid: sid}, nil
}

// nextPageURL is the listing's next page with the same filters, relative to the
// API's root (RFC 8288 resolves it against the request's URL).
func nextPageURL(account string, in *listCallsInput, cursor string) string {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(in.Limit))
	q.Set("cursor", cursor)
	for k, v := range map[string]string{"status": in.Status, "direction": in.Direction} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, v := range map[string]time.Time{"since": in.Since, "until": in.Until} {
		if !v.IsZero() {
			q.Set(k, v.Format(time.RFC3339Nano))
		}
	}
	return "/v1/Accounts/" + url.PathEscape(account) + "/Calls?" + q.Encode()
}

// callRequest validates a create-call body into a CallRequest; nothing is started.
// overriddenByApplication names the fields of b that jambonz's API overwrites with
// the application's when b names one (validateCreateCall's Object.assign).
func (b *createCallBody) overriddenByApplication() []string {
	var names []string
	for _, f := range []struct {
		given bool
		name  string
	}{
		{b.CallHook != nil, "call_hook"}, {b.CallStatusHook != nil, "call_status_hook"},
		{b.SpeechSynthesisVendor != "", "speech_synthesis_vendor"}, {b.SpeechSynthesisLanguage != "", "speech_synthesis_language"},
		{b.SpeechSynthesisVoice != "", "speech_synthesis_voice"}, {b.SpeechRecognizerVendor != "", "speech_recognizer_vendor"},
		{b.SpeechRecognizerLanguage != "", "speech_recognizer_language"},
	} {
		if f.given {
			names = append(names, f.name)
		}
	}
	return names
}

func (a *API) callRequest(ctx context.Context, acct nodestore.Account, in *createCallInput) (calls.Request, error) {
	b := &in.Body
	to, field := b.To.address()
	if to == "" {
		return calls.Request{}, huma.Error422UnprocessableEntity("invalid to", &huma.ErrorDetail{
			Location: "body.to." + field, Message: "required for a target of type " + b.To.Type})
	}
	req := calls.Request{Account: acct, ApplicationSid: b.ApplicationSid, From: b.From, To: to, Tag: b.Tag}
	// jambonz-api-server's validateCreateCall: an application_sid brings the
	// application's hooks and speech settings, overwriting those of the body; without
	// one, the five speech settings are required, then a call_hook.
	if b.ApplicationSid != "" {
		app, err := a.store.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: acct.Sid, Sid: b.ApplicationSid})
		if err != nil {
			if errors.Is(err, nodestore.ErrNotFound) {
				return req, huma.Error400BadRequest("application_sid not found " + b.ApplicationSid)
			}
			return req, a.internal(err)
		}
		hook, err := calls.ParseHook(app.CallHook)
		if err != nil { // checked when the application was stored
			return req, a.internal(fmt.Errorf("application %s: %w", app.Sid, err))
		}
		req.CallHook, req.CallStatusHook = hook, app.CallStatusHook
		req.Application = applicationOf(app.ApplicationSettings)
		if overridden := b.overriddenByApplication(); len(overridden) > 0 {
			req.Compat = append(req.Compat, callctl.Compat{Rule: callctl.CompatIgnoredProperty, Detail: fmt.Sprintf(
				"create call: %s given with application_sid: jambonz's API replaces them with the application's", strings.Join(overridden, ", "))})
		}
	} else {
		if b.SpeechSynthesisVendor == "" || b.SpeechSynthesisLanguage == "" || b.SpeechSynthesisVoice == "" ||
			b.SpeechRecognizerVendor == "" || b.SpeechRecognizerLanguage == "" {
			return req, huma.Error400BadRequest("either application_sid or set of speech_synthesis_vendor, speech_synthesis_language, " +
				"speech_synthesis_voice, speech_recognizer_vendor, speech_recognizer_language required")
		}
		if b.CallHook == nil {
			return req, huma.Error400BadRequest("either call_hook or application_sid required")
		}
		hook, err := b.CallHook.hook("call_hook", true)
		if err != nil {
			return req, err
		}
		req.CallHook = hook
		req.Application = applicationOf(nodestore.ApplicationSettings{
			SpeechSynthesisVendor: b.SpeechSynthesisVendor, SpeechSynthesisLanguage: b.SpeechSynthesisLanguage, SpeechSynthesisVoice: b.SpeechSynthesisVoice,
			SpeechRecognizerVendor: b.SpeechRecognizerVendor, SpeechRecognizerLanguage: b.SpeechRecognizerLanguage})
		if b.CallStatusHook != nil {
			status, err := b.CallStatusHook.spec("call_status_hook", true)
			if err != nil {
				return req, err
			}
			req.CallStatusHook = &status
		}
	}
	req.RingTimeout = time.Duration(b.Timeout) * time.Second
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
	if field, why := b.refused(); field != "" {
		return nil, huma.Error422UnprocessableEntity("unsupported live call control", &huma.ErrorDetail{
			Location: "body." + field, Message: "not supported: " + why})
	}
	if b.CallStatusHook != nil && b.CallHook == nil {
		return nil, huma.Error422UnprocessableEntity("invalid call_status_hook", &huma.ErrorDetail{
			Location: "body.call_status_hook", Message: "goes with call_hook: the status hook of the application redirected to"})
	}
	set := 0
	media := b.mediaUpdate()
	for _, given := range []bool{b.CallHook != nil, b.CallStatus != "", b.MuteStatus != "", media != "", b.ChildCallHook != nil} {
		if given {
			set++
		}
	}
	if set != 1 {
		return nil, huma.Error422UnprocessableEntity("give exactly one of call_hook, call_status, mute_status, child_call_hook or a media update (whisper, listen_status, record ...)")
	}
	var err error
	status := ""
	switch {
	case b.CallStatus == "completed":
		err, status = a.calls.Hangup(acct.Sid, in.CallSid), "hanging up"
	case b.CallStatus == "no-answer":
		err, status = a.calls.NoAnswer(acct.Sid, in.CallSid), "canceling"
	case b.ChildCallHook != nil:
		hook, herr := b.ChildCallHook.redirectSpec("child_call_hook")
		if herr != nil {
			return nil, herr
		}
		err, status = a.calls.ChildRedirect(acct.Sid, in.CallSid, hook.URL), "redirecting the dialed leg"
	case b.CallHook != nil:
		hook, herr := b.CallHook.redirectSpec("call_hook")
		if herr != nil {
			return nil, herr
		}
		var statusHook *nodestore.HookSpec
		if b.CallStatusHook != nil {
			sh, herr := b.CallStatusHook.redirectSpec("call_status_hook")
			if herr != nil {
				return nil, herr
			}
			statusHook = &sh
		}
		err, status = a.calls.Redirect(acct.Sid, in.CallSid, hook, statusHook), "redirecting"
	case media != "":
		err, status = a.calls.Update(acct.Sid, in.CallSid, media), media
	default:
		err, status = a.calls.Mute(acct.Sid, in.CallSid, b.MuteStatus == "mute"), b.MuteStatus
	}
	switch {
	case errors.Is(err, nodestore.ErrNotFound) && in.ForwardedBy == "":
		// Not running here: perhaps on another node sharing the database.
		return a.forwardUpdate(ctx, acct, in)
	case errors.Is(err, calls.ErrCallAnswered):
		return nil, huma.Error409Conflict("the call was answered: no-answer cancels only a call not yet answered; hang it up with call_status completed")
	case errors.Is(err, calls.ErrControlBacklog):
		return nil, huma.Error429TooManyRequests("the call has not applied earlier commands yet")
	case err != nil:
		return nil, a.liveCallError(err)
	}
	out := &acceptedOutput{}
	out.Body.CallSid, out.Body.Status = in.CallSid, status
	return out, nil
}

// liveCallError is the problem for a live call that is no longer there to
// control: not found (or not active), ended, or on a node that lost its lease and
// is being recorded as ended (503); a 500 for any other error.
func (a *API) liveCallError(err error) error {
	switch {
	case errors.Is(err, nodestore.ErrNotFound):
		return huma.Error404NotFound("call not found or no longer active")
	case errors.Is(err, calls.ErrCallEnded):
		return huma.Error409Conflict("the call has ended")
	case errors.Is(err, calls.ErrNotHere):
		return huma.Error503ServiceUnavailable("the node running the call lost its lease: the call is being recorded as ended")
	}
	return a.internal(err)
}

// applicationOf is the call's Application from an application's settings.
func applicationOf(s nodestore.ApplicationSettings) callctl.Application {
	return callctl.Application{
		Synthesizer: callctl.Speech{Vendor: s.SpeechSynthesisVendor, Language: s.SpeechSynthesisLanguage, Voice: s.SpeechSynthesisVoice,
			Label: s.SpeechSynthesisLabel, FallbackVendor: s.FallbackSpeechSynthesisVendor, FallbackLanguage: s.FallbackSpeechSynthesisLanguage,
			FallbackVoice: s.FallbackSpeechSynthesisVoice, FallbackLabel: s.FallbackSpeechSynthesisLabel},
		Recognizer: callctl.Speech{Vendor: s.SpeechRecognizerVendor, Language: s.SpeechRecognizerLanguage, Label: s.SpeechRecognizerLabel,
			FallbackVendor: s.FallbackSpeechRecognizerVendor, FallbackLanguage: s.FallbackSpeechRecognizerLanguage, FallbackLabel: s.FallbackSpeechRecognizerLabel},
		EnvVars: s.EnvVars,
	}
}
