package nodeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// hookBody is a hook in API requests.
type hookBody struct {
	URL      string `json:"url" minLength:"1" maxLength:"2048" doc:"http(s) or ws(s) URL, optionally with a #rc=..&rp=.. retry fragment"`
	Method   string `json:"method,omitempty" enum:"GET,POST" doc:"POST (default) or GET"`
	Username string `json:"username,omitempty" maxLength:"256"`
	Password string `json:"password,omitempty" maxLength:"256"`
}

// spec validates the hook's URL and returns it as stored.
func (h *hookBody) spec(field string, allowWebSocket bool) (nodestore.HookSpec, error) {
	t, err := fragment.Parse(h.URL)
	if err != nil {
		return nodestore.HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: err.Error(), Value: fragment.Redact(h.URL)})
	}
	if !allowWebSocket && t.Policy.Transport == fragment.WebSocket {
		return nodestore.HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: "must be an http or https URL", Value: fragment.Redact(h.URL)})
	}
	if (h.Username == "") != (h.Password == "") {
		return nodestore.HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field, Message: "username and password go together (HTTP Basic auth)"})
	}
	return nodestore.HookSpec{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}, nil
}

type createApplicationInput struct {
	AccountParams
	Body struct {
		Name           string    `json:"name" minLength:"1" maxLength:"200"`
		CallHook       hookBody  `json:"call_hook" doc:"The application: HTTP webhook or WebSocket URL"`
		CallStatusHook *hookBody `json:"call_status_hook,omitempty" doc:"Receives call status notifications (HTTP applications)"`
	}
}

type applicationOutput struct {
	Body nodestore.Application
}

type applicationInput struct {
	AccountParams
	Application string `path:"application" maxLength:"64"`
}

type listApplicationsOutput struct {
	Body []nodestore.Application
}

func (a *API) registerApplications(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "create-application", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Applications",
		Summary: "Create an application", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *createApplicationInput) (*applicationOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		callHook, err := in.Body.CallHook.spec("call_hook", true)
		if err != nil {
			return nil, err
		}
		app := nodestore.Application{Sid: nodestore.NewSid(), AccountSid: acct.Sid, Name: in.Body.Name, CallHook: callHook,
			CreatedAt: a.clock.Now().UTC().Truncate(time.Millisecond)}
		if in.Body.CallStatusHook != nil {
			status, err := in.Body.CallStatusHook.spec("call_status_hook", false)
			if err != nil {
				return nil, err
			}
			app.CallStatusHook = &status
		}
		if err := a.store.SaveApplication(ctx, app); err != nil {
			return nil, a.internal(err)
		}
		return &applicationOutput{Body: redactApplication(app)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "list-applications", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Applications",
		Summary: "List the account's applications",
	}, func(ctx context.Context, in *struct{ AccountParams }) (*listApplicationsOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		apps, err := a.store.ListApplications(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		out := &listApplicationsOutput{Body: make([]nodestore.Application, len(apps))}
		for i, app := range apps {
			out.Body[i] = redactApplication(app)
		}
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "get-application", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Applications/{application}",
		Summary: "Read an application",
	}, func(ctx context.Context, in *applicationInput) (*applicationOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		app, err := a.store.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: acct.Sid, Sid: in.Application})
		if err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		return &applicationOutput{Body: redactApplication(app)}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "delete-application", Method: http.MethodDelete, Path: "/v1/Accounts/{account}/Applications/{application}",
		Summary: "Delete an application", DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, in *applicationInput) (*struct{}, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		if err := a.store.DeleteApplication(ctx, nodestore.DeleteApplicationParams{AccountSid: acct.Sid, Sid: in.Application}); err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		return nil, nil
	})
}

// redactApplication hides hook passwords in API answers, and the user-info of a URL
// stored before such URLs were refused (docs/call-control.md §3).
func redactApplication(app nodestore.Application) nodestore.Application {
	if app.CallHook.Password != "" {
		app.CallHook.Password = "********"
	}
	app.CallHook.URL = fragment.Redact(app.CallHook.URL)
	if app.CallStatusHook != nil {
		h := *app.CallStatusHook
		if h.Password != "" {
			h.Password = "********"
		}
		h.URL = fragment.Redact(h.URL)
		app.CallStatusHook = &h
	}
	return app
}
