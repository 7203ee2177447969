package console

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
)

// callFilter is the call list's query, as the API takes it: status, direction,
// since, until, and the cursor of the page (the X-Next-Cursor of the previous one).
type callFilter struct {
	Status, Direction, Since, Until, Cursor string
}

type callRow struct {
	nodeapi.CallView
	Duration string
}

// callStatuses are the call_status values the call list filters on.
var callStatuses = []string{"trying", "ringing", "early-media", "in-progress", "queued", "completed", "failed", "busy", "no-answer"}

type callsData struct {
	Statuses []string
	Calls    []callRow
	Filter   callFilter
	NextPage template.URL
}

func (c *Console) calls(w http.ResponseWriter, r *http.Request, s session) {
	q := r.URL.Query()
	f := callFilter{Status: q.Get("status"), Direction: q.Get("direction"), Since: q.Get("since"), Until: q.Get("until"), Cursor: q.Get("cursor")}
	api := url.Values{"limit": {"50"}}
	for k, v := range map[string]string{"status": f.Status, "direction": f.Direction, "cursor": f.Cursor} {
		if v != "" {
			api.Set(k, v)
		}
	}
	for k, v := range map[string]string{"since": f.Since, "until": f.Until} {
		t, err := parseTime(v)
		if err != nil {
			c.render(w, http.StatusUnprocessableEntity, "calls", view{Title: "Calls", Nav: "calls", Session: &s, Error: k + ": " + err.Error(), Data: callsData{Filter: f, Statuses: callStatuses}})
			return
		}
		if !t.IsZero() {
			api.Set(k, t.Format(time.RFC3339))
		}
	}
	var list []nodeapi.CallView
	h, err := s.api.get(r.Context(), "/v1/Accounts/"+esc(s.AccountSid)+"/Calls", api, &list)
	d := callsData{Filter: f, Statuses: callStatuses}
	errMsg, status := "", http.StatusOK
	if err != nil {
		if statusOf(err) >= 500 {
			c.fail(w, r, &s, err)
			return
		}
		errMsg, status = err.Error(), statusOf(err)
	}
	now := c.opts.Clock.Now()
	for _, v := range list {
		row := callRow{CallView: v}
		end := now
		if v.EndedAt != nil {
			end = *v.EndedAt
		}
		row.Duration = end.Sub(v.CreatedAt).Round(100 * time.Millisecond).String()
		d.Calls = append(d.Calls, row)
	}
	if next := h.Get("X-Next-Cursor"); next != "" {
		nq := url.Values{"cursor": {next}}
		for k, v := range map[string]string{"status": f.Status, "direction": f.Direction, "since": f.Since, "until": f.Until} {
			if v != "" {
				nq.Set(k, v)
			}
		}
		d.NextPage = template.URL("/console/calls?" + nq.Encode()) // built of escaped parts
	}
	c.render(w, status, "calls", view{Title: "Calls", Nav: "calls", Session: &s, Notice: notice(r), Error: errMsg, Data: d})
}

type callData struct {
	Call     nodeapi.CallView
	Duration string
	Timeline timeline
	Redirect string
}

func (c *Console) call(w http.ResponseWriter, r *http.Request, s session) {
	c.renderCall(w, r, s, http.StatusOK, "", "")
}

func (c *Console) renderCall(w http.ResponseWriter, r *http.Request, s session, status int, errMsg, redirect string) {
	var v nodeapi.CallView
	if _, err := s.api.get(r.Context(), "/v1/Accounts/"+esc(s.AccountSid)+"/Calls/"+esc(r.PathValue("sid")), nil, &v); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	end := c.opts.Clock.Now()
	if v.EndedAt != nil {
		end = *v.EndedAt
	}
	d := callData{Call: v, Duration: end.Sub(v.CreatedAt).Round(100 * time.Millisecond).String(), Timeline: buildTimeline(v.Timeline), Redirect: redirect}
	if !v.Active && len(v.Timeline) > 0 {
		// The call's own clock: a scenario's simulated time runs faster than the wall's.
		d.Duration = fmtMS(d.Timeline.EndMS)
	}
	c.render(w, status, "call", view{Title: "Call " + v.CallSid, Nav: "calls", Session: &s, Notice: notice(r), Error: errMsg, Data: d})
}

// callAction controls a running call through the API: hang up, redirect.
func (c *Console) callAction(w http.ResponseWriter, r *http.Request, s session) {
	sid := r.PathValue("sid")
	var body map[string]any
	redirect := strings.TrimSpace(r.PostFormValue("url"))
	switch r.PathValue("action") {
	case "hangup":
		body = map[string]any{"call_status": "completed"}
	case "redirect":
		body = map[string]any{"call_hook": map[string]any{"url": redirect}}
	default:
		c.renderStatus(w, r, http.StatusNotFound, &s, "no such action")
		return
	}
	if _, err := s.api.do(r.Context(), http.MethodPost, "/v1/Accounts/"+esc(s.AccountSid)+"/Calls/"+esc(sid), nil, body, nil); err != nil {
		if statusOf(err) >= 500 {
			c.fail(w, r, &s, err)
			return
		}
		c.renderCall(w, r, s, statusOf(err), err.Error(), redirect)
		return
	}
	http.Redirect(w, r, "/console/calls/"+esc(sid)+"?done="+r.PathValue("action"), http.StatusSeeOther)
}
