package featureserver

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/fragment"
)

type createAccountInput struct {
	Authorization string `header:"Authorization" doc:"Bearer admin token (SWITCHBOARD_ADMIN_TOKEN)"`
	Body          struct {
		Name string `json:"name" minLength:"1" maxLength:"200" doc:"Display name"`
	}
}

type createAccountOutput struct {
	Body struct {
		AccountSid          string `json:"account_sid"`
		Name                string `json:"name"`
		APIToken            string `json:"api_token" doc:"Bearer token of the account: shown once"`
		WebhookSecret       string `json:"webhook_secret" doc:"Signs the account's hooks (Jambonz-Signature)"`
		StatusWebhookSecret string `json:"status_webhook_secret" doc:"Standard Webhooks secret (whsec_) of the account's status hook deliveries"`
	}
}

type accountOutput struct {
	Body struct {
		AccountSid          string `json:"account_sid"`
		Name                string `json:"name"`
		WebhookSecret       string `json:"webhook_secret" doc:"Signs the account's hooks (Jambonz-Signature)"`
		StatusWebhookSecret string `json:"status_webhook_secret" doc:"Standard Webhooks secret (whsec_) of the account's status hook deliveries"`
	}
}

func (a *API) registerAccounts(api huma.API) {
	// The account's own token reads its secrets: the way to learn the webhook secret
	// a bootstrap file left for the node to generate.
	huma.Register(api, huma.Operation{
		OperationID: "get-account", Method: http.MethodGet, Path: "/v1/Accounts/{account}",
		Summary: "Read the account, with its webhook secrets (the account's own token)",
	}, func(ctx context.Context, in *struct{ AccountParams }) (*accountOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		out := &accountOutput{}
		out.Body.AccountSid, out.Body.Name, out.Body.WebhookSecret = acct.Sid, acct.Name, acct.WebhookSecret
		out.Body.StatusWebhookSecret = StatusWebhookSecret(acct.WebhookSecret)
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "create-account", Method: http.MethodPost, Path: "/v1/Accounts",
		Summary: "Create an account (admin token)", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *createAccountInput) (*createAccountOutput, error) {
		if err := a.authorizeAdmin(in.Authorization); err != nil {
			return nil, err
		}
		acct, token, err := a.store.CreateAccount(ctx, in.Body.Name)
		if err != nil {
			return nil, a.internal(err)
		}
		out := &createAccountOutput{}
		out.Body.AccountSid, out.Body.Name, out.Body.APIToken, out.Body.WebhookSecret = acct.Sid, acct.Name, token, acct.WebhookSecret
		out.Body.StatusWebhookSecret = StatusWebhookSecret(acct.WebhookSecret)
		return out, nil
	})
}

// hookBody is a hook in API requests.
type hookBody struct {
	URL      string `json:"url" minLength:"1" maxLength:"2048" doc:"http(s) or ws(s) URL, optionally with a #rc=..&rp=.. retry fragment"`
	Method   string `json:"method,omitempty" enum:"GET,POST" doc:"POST (default) or GET"`
	Username string `json:"username,omitempty" maxLength:"256"`
	Password string `json:"password,omitempty" maxLength:"256"`
}

// spec validates the hook's URL and returns it as stored.
func (h *hookBody) spec(field string, allowWebSocket bool) (HookSpec, error) {
	t, err := fragment.Parse(h.URL)
	if err != nil {
		return HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: err.Error(), Value: h.URL})
	}
	if !allowWebSocket && t.Policy.Transport == fragment.WebSocket {
		return HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: "must be an http or https URL", Value: h.URL})
	}
	if (h.Username == "") != (h.Password == "") {
		return HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field, Message: "username and password go together (HTTP Basic auth)"})
	}
	return HookSpec{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}, nil
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
	Body Application
}

type applicationInput struct {
	AccountParams
	Application string `path:"application" maxLength:"64"`
}

type listApplicationsOutput struct {
	Body []Application
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
		app := Application{Sid: newSid(), AccountSid: acct.Sid, Name: in.Body.Name, CallHook: callHook,
			CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
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
		apps, err := a.store.Applications(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		out := &listApplicationsOutput{Body: make([]Application, len(apps))}
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
		app, err := a.store.Application(ctx, acct.Sid, in.Application)
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
		if err := a.store.DeleteApplication(ctx, acct.Sid, in.Application); err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		return nil, nil
	})
}

// redactApplication hides hook passwords in API answers.
func redactApplication(app Application) Application {
	if app.CallHook.Password != "" {
		app.CallHook.Password = "********"
	}
	if app.CallStatusHook != nil && app.CallStatusHook.Password != "" {
		h := *app.CallStatusHook
		h.Password = "********"
		app.CallStatusHook = &h
	}
	return app
}
