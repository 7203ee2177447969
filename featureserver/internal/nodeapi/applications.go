package nodeapi

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
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
	hook, err := h.hook(field, allowWebSocket)
	return hook.Spec, err
}

// hook validates the hook's URL and returns it as stored, with the URL parsed.
func (h *hookBody) hook(field string, allowWebSocket bool) (calls.Hook, error) {
	hook, err := calls.ParseHook(nodestore.HookSpec{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password})
	if err != nil {
		return calls.Hook{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: err.Error(), Value: fragment.Redact(h.URL)})
	}
	if !allowWebSocket && hook.URL.Policy.Transport == fragment.WebSocket {
		return calls.Hook{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: "must be an http or https URL", Value: fragment.Redact(h.URL)})
	}
	if (h.Username == "") != (h.Password == "") {
		return calls.Hook{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field, Message: "username and password go together (HTTP Basic auth)"})
	}
	return hook, nil
}

// redirectSpec validates a redirect's hook: an absolute URL as spec takes it, or a
// URL relative to the call's application, which the call resolves (callctl.Control).
func (h *hookBody) redirectSpec(field string) (nodestore.HookSpec, error) {
	u, err := url.Parse(h.URL)
	if err != nil || u.IsAbs() || u.Host != "" {
		return h.spec(field, field == "call_hook")
	}
	if u.Path == "" {
		return nodestore.HookSpec{}, huma.Error422UnprocessableEntity("invalid "+field, &huma.ErrorDetail{
			Location: "body." + field + ".url", Message: "a relative URL needs a path", Value: h.URL})
	}
	return nodestore.HookSpec{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}, nil
}

type createApplicationInput struct {
	AccountParams
	Body applicationBody
}

// applicationBody is jambonz's application payload; its media settings, which a
// simulating node cannot honour, are accepted and ignored.
type applicationBody struct {
	Name           string   `json:"name" minLength:"1" maxLength:"200"`
	AccountSid     string   `json:"account_sid,omitempty" maxLength:"64" doc:"The account of the path, when given"`
	CallHook       hookRef  `json:"call_hook" doc:"The application: HTTP webhook or WebSocket URL, or a webhook object"`
	CallStatusHook *hookRef `json:"call_status_hook,omitempty" doc:"Receives call status notifications: http(s), or ws(s) (a WebSocket application's go over its socket unless it is http(s))"`
	ApplicationSettingsBody
	IgnoredApplicationFields
}

// applicationPatch is the body of PUT: as jambonz does, only the fields given
// replace the stored ones (merge).
type applicationPatch struct {
	Name           *string  `json:"name,omitempty" minLength:"1" maxLength:"200"`
	AccountSid     string   `json:"account_sid,omitempty" maxLength:"64" doc:"The account of the path, when given"`
	CallHook       *hookRef `json:"call_hook,omitempty" doc:"The application: HTTP webhook or WebSocket URL, or a webhook object"`
	CallStatusHook *hookRef `json:"call_status_hook,omitempty" doc:"Receives call status notifications: http(s), or ws(s) (a WebSocket application's go over its socket unless it is http(s))"`
	ApplicationSettingsBody
	IgnoredApplicationFields
}

// ApplicationSettingsBody are an application's speech settings and env_vars, as
// jambonz's API takes them: the call hooks of its calls carry them as defaults and
// env_vars (docs/compatibility.md §5).
type ApplicationSettingsBody struct {
	SpeechSynthesisVendor            string         `json:"speech_synthesis_vendor,omitempty" maxLength:"64" doc:"The call hook's defaults.synthesizer.vendor (default google)"`
	SpeechSynthesisLanguage          string         `json:"speech_synthesis_language,omitempty" maxLength:"64" doc:"defaults.synthesizer.language (default en-US)"`
	SpeechSynthesisVoice             string         `json:"speech_synthesis_voice,omitempty" maxLength:"128" doc:"defaults.synthesizer.voice (default en-US-Standard-C with google)"`
	SpeechSynthesisLabel             string         `json:"speech_synthesis_label,omitempty" maxLength:"64" doc:"defaults.synthesizer.label"`
	SpeechRecognizerVendor           string         `json:"speech_recognizer_vendor,omitempty" maxLength:"64" doc:"defaults.recognizer.vendor (default google)"`
	SpeechRecognizerLanguage         string         `json:"speech_recognizer_language,omitempty" maxLength:"64" doc:"defaults.recognizer.language (default en-US)"`
	SpeechRecognizerLabel            string         `json:"speech_recognizer_label,omitempty" maxLength:"64" doc:"defaults.recognizer.label"`
	FallbackSpeechSynthesisVendor    string         `json:"fallback_speech_synthesis_vendor,omitempty" maxLength:"64" doc:"defaults.synthesizer.fallback_vendor"`
	FallbackSpeechSynthesisLanguage  string         `json:"fallback_speech_synthesis_language,omitempty" maxLength:"64" doc:"defaults.synthesizer.fallback_language"`
	FallbackSpeechSynthesisVoice     string         `json:"fallback_speech_synthesis_voice,omitempty" maxLength:"128" doc:"defaults.synthesizer.fallback_voice"`
	FallbackSpeechSynthesisLabel     string         `json:"fallback_speech_synthesis_label,omitempty" maxLength:"64" doc:"defaults.synthesizer.fallback_label"`
	FallbackSpeechRecognizerVendor   string         `json:"fallback_speech_recognizer_vendor,omitempty" maxLength:"64" doc:"defaults.recognizer.fallback_vendor"`
	FallbackSpeechRecognizerLanguage string         `json:"fallback_speech_recognizer_language,omitempty" maxLength:"64" doc:"defaults.recognizer.fallback_language"`
	FallbackSpeechRecognizerLabel    string         `json:"fallback_speech_recognizer_label,omitempty" maxLength:"64" doc:"defaults.recognizer.fallback_label"`
	EnvVars                          map[string]any `json:"env_vars,omitempty" doc:"The call hook's env_vars"`
}

// settings is b as stored.
func (b ApplicationSettingsBody) settings() nodestore.ApplicationSettings {
	return nodestore.ApplicationSettings(b)
}

// over returns old with the settings b gives (non-empty) in their place.
func (b ApplicationSettingsBody) over(old nodestore.ApplicationSettings) nodestore.ApplicationSettings {
	pick := func(given, had string) string {
		if given != "" {
			return given
		}
		return had
	}
	n := b.settings()
	o := old
	return nodestore.ApplicationSettings{
		SpeechSynthesisVendor: pick(n.SpeechSynthesisVendor, o.SpeechSynthesisVendor), SpeechSynthesisLanguage: pick(n.SpeechSynthesisLanguage, o.SpeechSynthesisLanguage),
		SpeechSynthesisVoice: pick(n.SpeechSynthesisVoice, o.SpeechSynthesisVoice), SpeechSynthesisLabel: pick(n.SpeechSynthesisLabel, o.SpeechSynthesisLabel),
		SpeechRecognizerVendor: pick(n.SpeechRecognizerVendor, o.SpeechRecognizerVendor), SpeechRecognizerLanguage: pick(n.SpeechRecognizerLanguage, o.SpeechRecognizerLanguage),
		SpeechRecognizerLabel:            pick(n.SpeechRecognizerLabel, o.SpeechRecognizerLabel),
		FallbackSpeechSynthesisVendor:    pick(n.FallbackSpeechSynthesisVendor, o.FallbackSpeechSynthesisVendor),
		FallbackSpeechSynthesisLanguage:  pick(n.FallbackSpeechSynthesisLanguage, o.FallbackSpeechSynthesisLanguage),
		FallbackSpeechSynthesisVoice:     pick(n.FallbackSpeechSynthesisVoice, o.FallbackSpeechSynthesisVoice),
		FallbackSpeechSynthesisLabel:     pick(n.FallbackSpeechSynthesisLabel, o.FallbackSpeechSynthesisLabel),
		FallbackSpeechRecognizerVendor:   pick(n.FallbackSpeechRecognizerVendor, o.FallbackSpeechRecognizerVendor),
		FallbackSpeechRecognizerLanguage: pick(n.FallbackSpeechRecognizerLanguage, o.FallbackSpeechRecognizerLanguage),
		FallbackSpeechRecognizerLabel:    pick(n.FallbackSpeechRecognizerLabel, o.FallbackSpeechRecognizerLabel),
		EnvVars:                          envVars(n.EnvVars, o.EnvVars),
	}
}

// IgnoredApplicationFields are jambonz's application fields a simulating node has no use
// for (SMS, recording, app_json): accepted, so that a jambonz payload is taken as it
// is, and ignored.
type IgnoredApplicationFields struct {
	MessagingHook        *hookRef `json:"messaging_hook,omitempty" doc:"Accepted, ignored: the node sends no SMS"`
	UseForFallbackSpeech *intBool `json:"use_for_fallback_speech,omitempty" doc:"Accepted, ignored: media is simulated"`
	RecordAllCalls       *intBool `json:"record_all_calls,omitempty" doc:"Accepted, ignored: no recording"`
	AppJSON              any      `json:"app_json,omitempty" doc:"Accepted, ignored: the node runs the application's hooks"`
}

// merged is the stored application old with the fields of p given, as a whole body
// for application to validate.
func (p *applicationPatch) merged(old nodestore.Application) applicationBody {
	b := applicationBody{Name: old.Name, AccountSid: p.AccountSid, CallHook: hookRefOf(old.CallHook), IgnoredApplicationFields: p.IgnoredApplicationFields,
		ApplicationSettingsBody: ApplicationSettingsBody(p.over(old.ApplicationSettings))}
	if old.CallStatusHook != nil {
		h := hookRefOf(*old.CallStatusHook)
		b.CallStatusHook = &h
	}
	if p.Name != nil {
		b.Name = *p.Name
	}
	if p.CallHook != nil {
		b.CallHook = *p.CallHook
	}
	if p.CallStatusHook != nil {
		b.CallStatusHook = p.CallStatusHook
	}
	return b
}

func hookRefOf(h nodestore.HookSpec) hookRef {
	return hookRef{hookBody{URL: h.URL, Method: h.Method, Username: h.Username, Password: h.Password}}
}

// application validates the body into the application of sid, as stored.
func (b *applicationBody) application(acct nodestore.Account, sid string, now time.Time) (nodestore.Application, error) {
	if b.AccountSid != "" && b.AccountSid != acct.Sid {
		return nodestore.Application{}, huma.Error422UnprocessableEntity("invalid account_sid", &huma.ErrorDetail{
			Location: "body.account_sid", Message: "is not the account of the path", Value: b.AccountSid})
	}
	callHook, err := b.CallHook.spec("call_hook", true)
	if err != nil {
		return nodestore.Application{}, err
	}
	app := nodestore.Application{Sid: sid, AccountSid: acct.Sid, Name: b.Name, CallHook: callHook, CreatedAt: now.UTC().Truncate(time.Millisecond),
		ApplicationSettings: b.settings()}
	if b.CallStatusHook != nil {
		// jambonz takes a ws(s) status hook (jambonz-api-server isInvalidUrl).
		status, err := b.CallStatusHook.spec("call_status_hook", true)
		if err != nil {
			return nodestore.Application{}, err
		}
		app.CallStatusHook = &status
	}
	return app, nil
}

// applicationView is an application as the API shows it: sid is its
// application_sid, what @jambonz/node-client reads of a created one.
type applicationView struct {
	Sid string `json:"sid"`
	nodestore.Application
}

type applicationOutput struct {
	Body applicationView
}

type applicationInput struct {
	AccountParams
	Application string `path:"application" maxLength:"64"`
}

type updateApplicationInput struct {
	AccountParams
	Application string `path:"application" maxLength:"64"`
	Body        applicationPatch
}

type listApplicationsOutput struct {
	Body []applicationView
}

func (a *API) registerApplications(api huma.API) {
	registerForAccount(a, api, huma.Operation{
		OperationID: "create-application", Method: http.MethodPost, Path: "/v1/Accounts/{account}/Applications",
		Summary: "Create an application", DefaultStatus: http.StatusCreated, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, acct nodestore.Account, in *createApplicationInput) (*applicationOutput, error) {
		app, err := in.Body.application(acct, nodestore.NewSid(), a.clock.Now())
		if err != nil {
			return nil, err
		}
		if err := a.store.SaveApplication(ctx, app); err != nil {
			return nil, a.internal(err)
		}
		return &applicationOutput{Body: redactApplication(app)}, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "list-applications", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Applications",
		Summary: "List the account's applications",
	}, func(ctx context.Context, acct nodestore.Account, in *struct{ AccountParams }) (*listApplicationsOutput, error) {
		apps, err := a.store.ListApplications(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		return &listApplicationsOutput{Body: viewsOf(apps, redactApplication)}, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "get-application", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Applications/{application}",
		Summary: "Read an application",
	}, func(ctx context.Context, acct nodestore.Account, in *applicationInput) (*applicationOutput, error) {
		app, err := a.store.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: acct.Sid, Sid: in.Application})
		if err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		return &applicationOutput{Body: redactApplication(app)}, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "update-application", Method: http.MethodPut, Path: "/v1/Accounts/{account}/Applications/{application}",
		Summary: "Update an application: the fields given replace the stored ones", DefaultStatus: http.StatusNoContent, MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, acct nodestore.Account, in *updateApplicationInput) (*struct{}, error) {
		old, err := a.store.GetApplication(ctx, nodestore.GetApplicationParams{AccountSid: acct.Sid, Sid: in.Application})
		if err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		merged := in.Body.merged(old)
		app, err := merged.application(acct, old.Sid, old.CreatedAt)
		if err != nil {
			return nil, err
		}
		if err := a.store.SaveApplication(ctx, app); err != nil {
			return nil, a.internal(err)
		}
		return nil, nil
	})
	registerForAccount(a, api, huma.Operation{
		OperationID: "delete-application", Method: http.MethodDelete, Path: "/v1/Accounts/{account}/Applications/{application}",
		Summary: "Delete an application", DefaultStatus: http.StatusNoContent,
	}, func(ctx context.Context, acct nodestore.Account, in *applicationInput) (*struct{}, error) {
		if err := a.store.DeleteApplication(ctx, nodestore.DeleteApplicationParams{AccountSid: acct.Sid, Sid: in.Application}); err != nil {
			return nil, a.notFoundOr(err, "application")
		}
		return nil, nil
	})
}

// redactApplication hides hook passwords in API answers, and the user-info of a URL
// stored before such URLs were refused (docs/call-control.md §3).
func redactApplication(app nodestore.Application) applicationView {
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
	return applicationView{Sid: app.Sid, Application: app}
}

// envVars is the env_vars given, else those the application had.
func envVars(given, had map[string]any) map[string]any {
	if given != nil {
		return given
	}
	return had
}
