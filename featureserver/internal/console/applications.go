package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// application is an application as the API answers it.
type application struct {
	Sid string `json:"application_sid"`
	nodestore.Application
}

// appForm is what the create and edit forms of an application hold, kept to be
// shown again when the API refuses them. Hook credentials are never shown: the API
// answers a stored password masked.
type appForm struct {
	Name                                       string
	CallHook, CallMethod, CallUser, CallPass   string
	StatusHook, StatusMethod, StatusUser, StPw string
}

func appFormOf(r *http.Request) appForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return appForm{Name: v("name"), CallHook: v("callHook"), CallMethod: v("callMethod"), CallUser: v("callUser"), CallPass: r.PostFormValue("callPassword"),
		StatusHook: v("statusHook"), StatusMethod: v("statusMethod"), StatusUser: v("statusUser"), StPw: r.PostFormValue("statusPassword")}
}

func formOfApp(a application) appForm {
	f := appForm{Name: a.Name, CallHook: a.CallHook.URL, CallMethod: a.CallHook.Method, CallUser: a.CallHook.Username}
	if h := a.CallStatusHook; h != nil {
		f.StatusHook, f.StatusMethod, f.StatusUser = h.URL, h.Method, h.Username
	}
	return f
}

// hookJSON is a hook of the form as the API takes it.
func hookJSON(u, method, user, pass string) map[string]any {
	h := map[string]any{"url": u}
	if method != "" {
		h["method"] = method
	}
	if user != "" {
		h["username"], h["password"] = user, pass
	}
	return h
}

type applicationsData struct {
	Applications []application
	Form         appForm
}

func (c *Console) appsPath(s session) string {
	return "/v1/Accounts/" + esc(s.AccountSid) + "/Applications"
}

func (c *Console) applications(w http.ResponseWriter, r *http.Request, s session) {
	c.renderApplications(w, r, s, http.StatusOK, appForm{}, "")
}

func (c *Console) renderApplications(w http.ResponseWriter, r *http.Request, s session, status int, f appForm, errMsg string) {
	var apps []application
	if _, err := s.api.get(r.Context(), c.appsPath(s), nil, &apps); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	slices.SortFunc(apps, func(a, b application) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	c.render(w, status, "applications", view{Title: "Applications", Nav: "applications", Session: &s, Notice: notice(r), Error: errMsg,
		Data: applicationsData{Applications: apps, Form: f}})
}

func (c *Console) createApplication(w http.ResponseWriter, r *http.Request, s session) {
	f := appFormOf(r)
	body := map[string]any{"name": f.Name, "call_hook": hookJSON(f.CallHook, f.CallMethod, f.CallUser, f.CallPass)}
	if f.StatusHook != "" {
		body["call_status_hook"] = hookJSON(f.StatusHook, f.StatusMethod, f.StatusUser, f.StPw)
	}
	var out application
	if _, err := s.api.do(r.Context(), http.MethodPost, c.appsPath(s), nil, body, &out); err != nil {
		if statusOf(err) >= 500 {
			c.fail(w, r, &s, err)
			return
		}
		c.renderApplications(w, r, s, statusOf(err), f, err.Error())
		return
	}
	http.Redirect(w, r, "/console/applications/"+esc(out.Sid)+"?done=app-created", http.StatusSeeOther)
}

type applicationData struct {
	App    application
	Form   appForm
	Calls  string // the application's calls, on the calls page
	Status []string
}

func (c *Console) application(w http.ResponseWriter, r *http.Request, s session) {
	c.renderApplication(w, r, s, http.StatusOK, nil, "")
}

func (c *Console) renderApplication(w http.ResponseWriter, r *http.Request, s session, status int, form *appForm, errMsg string) {
	var app application
	if _, err := s.api.get(r.Context(), c.appsPath(s)+"/"+esc(r.PathValue("sid")), nil, &app); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	f := formOfApp(app)
	if form != nil {
		f = *form
	}
	c.render(w, status, "application", view{Title: "Application " + app.Name, Nav: "applications", Session: &s, Notice: notice(r), Error: errMsg,
		Data: applicationData{App: app, Form: f}})
}

// applicationAction edits or deletes an application through the API.
func (c *Console) applicationAction(w http.ResponseWriter, r *http.Request, s session) {
	path := c.appsPath(s) + "/" + esc(r.PathValue("sid"))
	switch r.PathValue("action") {
	case "edit":
		var old application
		if _, err := s.api.get(r.Context(), path, nil, &old); err != nil {
			c.fail(w, r, &s, err)
			return
		}
		f := appFormOf(r)
		body := map[string]any{"name": f.Name}
		// A hook is sent only when it changed: the API keeps a stored password that the
		// console never sees, and a hook sent replaces it whole.
		if changed, msg := hookChanged(old.CallHook, f.CallHook, f.CallMethod, f.CallUser, f.CallPass); msg != "" {
			c.renderApplication(w, r, s, http.StatusUnprocessableEntity, &f, "Call hook: "+msg)
			return
		} else if changed {
			body["call_hook"] = hookJSON(f.CallHook, f.CallMethod, f.CallUser, f.CallPass)
		}
		oldStatus := nodestore.HookSpec{}
		if old.CallStatusHook != nil {
			oldStatus = *old.CallStatusHook
		}
		if f.StatusHook == "" && old.CallStatusHook != nil {
			c.renderApplication(w, r, s, http.StatusUnprocessableEntity, &f, "Status hook: the API keeps a status hook once set; give its URL")
			return
		}
		if changed, msg := hookChanged(oldStatus, f.StatusHook, f.StatusMethod, f.StatusUser, f.StPw); msg != "" {
			c.renderApplication(w, r, s, http.StatusUnprocessableEntity, &f, "Status hook: "+msg)
			return
		} else if changed && f.StatusHook != "" {
			body["call_status_hook"] = hookJSON(f.StatusHook, f.StatusMethod, f.StatusUser, f.StPw)
		}
		if _, err := s.api.do(r.Context(), http.MethodPut, path, nil, body, nil); err != nil {
			if statusOf(err) >= 500 || statusOf(err) == http.StatusNotFound {
				c.fail(w, r, &s, err)
				return
			}
			c.renderApplication(w, r, s, statusOf(err), &f, err.Error())
			return
		}
		http.Redirect(w, r, "/console/applications/"+esc(r.PathValue("sid"))+"?done=app-updated", http.StatusSeeOther)
	case "delete":
		if _, err := s.api.do(r.Context(), http.MethodDelete, path, nil, nil, nil); err != nil {
			c.fail(w, r, &s, err)
			return
		}
		http.Redirect(w, r, "/console/applications?done=app-deleted", http.StatusSeeOther)
	default:
		c.renderStatus(w, r, http.StatusNotFound, &s, "no such action")
	}
}

// hookChanged reports whether the form's hook differs from the stored one; msg says
// why the change cannot be sent: a hook with Basic auth whose URL, method or user
// changes needs its password again, which the console never had.
func hookChanged(old nodestore.HookSpec, u, method, user, pass string) (changed bool, msg string) {
	method = strings.ToUpper(method)
	oldMethod := old.Method
	if oldMethod == "" {
		oldMethod = http.MethodPost
	}
	if method == "" {
		method = http.MethodPost
	}
	changed = u != old.URL || method != oldMethod || user != old.Username || pass != ""
	if changed && user != "" && pass == "" {
		return false, "give the Basic auth password again to change a hook that has one"
	}
	return changed, ""
}

// alertTypes are the types of the alerts' filter (the API's enum).
var alertTypes = []string{"webhook-connection-failure", "webhook-failure", "invalid-app-payload"}

type alertsData struct {
	Alerts []nodestore.Alert
	Type   string
	Since  string
	Types  []string
	Capped bool // the API's limit was reached: older alerts of the window are not shown
}

// alertsLimit is how many alerts the page reads at once (the API's most).
const alertsLimit = 1000

func (c *Console) alerts(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	d := alertsData{Type: q.Get("type"), Since: q.Get("since"), Types: alertTypes}
	since := c.opts.Clock.Now().UTC().Add(-24 * time.Hour)
	if d.Since != "" {
		t, err := parseTime(d.Since)
		if err != nil {
			c.renderStatus(w, r, http.StatusUnprocessableEntity, &s, err.Error())
			return
		}
		since = t
	}
	d.Since = since.Format("2006-01-02T15:04")
	api := url.Values{"since": {since.Format(time.RFC3339)}, "limit": {"1000"}}
	if d.Type != "" {
		api.Set("type", d.Type)
	}
	if _, err := s.api.get(r.Context(), "/v1/Accounts/"+esc(s.AccountSid)+"/Alerts", api, &d.Alerts); err != nil {
		if statusOf(err) >= 500 {
			c.fail(w, r, &s, err)
			return
		}
		c.render(w, statusOf(err), "alerts", view{Title: "Alerts", Nav: "alerts", Session: &s, Error: err.Error(), Data: d})
		return
	}
	d.Capped = len(d.Alerts) == alertsLimit
	slices.Reverse(d.Alerts) // newest first
	c.render(w, http.StatusOK, "alerts", view{Title: "Alerts", Nav: "alerts", Session: &s, Data: d})
}
