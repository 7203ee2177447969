package console

import (
	"encoding/json"
	"errors"
	"html/template"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// endpointForm is what the create and edit forms hold, kept to be shown again
// when the API refuses them.
type endpointForm struct {
	URL, Events, Profile, Policy, APIVersion string
	// Headers holds one "Name: value" a line; Channels are comma-separated;
	// RateLimit is deliveries per second ("" or 0 for none); Secret is given at
	// creation only (empty: the node makes one).
	Headers, Channels, Filter, RateLimit, Secret string
}

type endpointsData struct {
	Endpoints []outboxapi.WebhookEndpoint
	Form      endpointForm
	Profiles  []string
}

var profiles = []string{"standard", "sajn", "digize", "lucibook"}

func (c *Console) endpoints(w http.ResponseWriter, r *http.Request, s session) {
	c.renderEndpoints(w, r, s, http.StatusOK, endpointForm{Profile: "standard"}, "")
}

func (c *Console) renderEndpoints(w http.ResponseWriter, r *http.Request, s session, status int, f endpointForm, errMsg string) {
	eps, err := c.listEndpoints(r, s)
	if err != nil {
		c.fail(w, r, &s, err)
		return
	}
	c.render(w, status, "endpoints", view{Title: "Endpoints", Nav: "endpoints", Session: &s, Notice: notice(r), Error: errMsg,
		Data: endpointsData{Endpoints: eps, Form: f, Profiles: profiles}})
}

func formOf(r *http.Request) endpointForm {
	return endpointForm{URL: strings.TrimSpace(r.PostFormValue("url")), Events: r.PostFormValue("events"),
		Profile: r.PostFormValue("profile"), Policy: r.PostFormValue("policy"), APIVersion: strings.TrimSpace(r.PostFormValue("apiVersion")),
		Headers: r.PostFormValue("headers"), Channels: r.PostFormValue("channels"), Filter: r.PostFormValue("filter"),
		RateLimit: strings.TrimSpace(r.PostFormValue("rateLimit")), Secret: strings.TrimSpace(r.PostFormValue("secret"))}
}

// routing reads the form's headers, channels, filter and rate limit; what cannot be
// put into a request is an error, the rest is the API's to judge.
func (f endpointForm) routing() (headers map[string]string, channels []string, filter json.RawMessage, rate int, err error) {
	if headers, err = parseHeaders(f.Headers); err != nil {
		return nil, nil, nil, 0, err
	}
	channels = parseEvents(f.Channels)
	if filter, err = parseFilter(f.Filter); err != nil {
		return nil, nil, nil, 0, err
	}
	if f.RateLimit != "" {
		if rate, err = strconv.Atoi(f.RateLimit); err != nil {
			return nil, nil, nil, 0, errors.New("rate limit: a whole number of deliveries per second")
		}
	}
	return headers, channels, filter, rate, nil
}

// secretData is the page that shows a secret once: after a creation or a rotation.
type secretData struct {
	Endpoint outboxapi.WebhookEndpoint
	Secret   string
	Created  bool
}

func (c *Console) createEndpoint(w http.ResponseWriter, r *http.Request, s session) {
	f := formOf(r)
	events := parseEvents(f.Events)
	policy, err := parsePolicy(f.Policy)
	if err != nil {
		c.renderEndpoints(w, r, s, http.StatusUnprocessableEntity, f, err.Error())
		return
	}
	headers, channels, filter, rate, err := f.routing()
	if err != nil {
		c.renderEndpoints(w, r, s, http.StatusUnprocessableEntity, f, err.Error())
		return
	}
	body := map[string]any{"url": f.URL}
	if events != nil {
		body["events"] = events
	}
	if headers != nil {
		body["headers"] = headers
	}
	if channels != nil {
		body["channels"] = channels
	}
	if filter != nil {
		body["filter"] = filter
	}
	if rate != 0 {
		body["rateLimit"] = rate
	}
	if f.Secret != "" {
		body["secret"] = f.Secret
	}
	if f.Profile != "" {
		body["profile"] = f.Profile
	}
	if policy != nil {
		body["policy"] = policy
	}
	if f.APIVersion != "" {
		body["apiVersion"] = f.APIVersion
	}
	var out outboxapi.WebhookEndpointWithSecret
	if _, err := s.api.do(r.Context(), http.MethodPost, "/api/v1/webhooks", nil, body, &out); err != nil {
		if statusOf(err) >= 500 {
			c.fail(w, r, &s, err)
			return
		}
		c.renderEndpoints(w, r, s, statusOf(err), f, err.Error())
		return
	}
	c.render(w, http.StatusCreated, "secret", view{Title: "Endpoint created", Nav: "endpoints", Session: &s,
		Data: secretData{Endpoint: out.WebhookEndpoint, Secret: out.Secret, Created: true}})
}

// deliveryFilter is the delivery log's query: the API's filters and cursor.
type deliveryFilter struct {
	Type, EventID, Status, Cursor string
}

func (f deliveryFilter) query() url.Values {
	q := url.Values{"limit": {"25"}}
	for k, v := range map[string]string{"type": f.Type, "eventId": f.EventID, "status": f.Status, "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

type endpointData struct {
	Endpoint   outboxapi.WebhookEndpoint
	Chart      chart
	Deliveries []outboxapi.WebhookDelivery
	Filter     deliveryFilter
	Statuses   []string
	NextPage   template.URL // the next page, empty on the last
	Form       endpointForm
	Profiles   []string
	Since      string
}

func (c *Console) endpoint(w http.ResponseWriter, r *http.Request, s session) {
	c.renderEndpoint(w, r, s, http.StatusOK, nil, "")
}

// renderEndpoint renders an endpoint's page; form, when set, is an edit the API
// refused, shown again with errMsg.
func (c *Console) renderEndpoint(w http.ResponseWriter, r *http.Request, s session, status int, form *endpointForm, errMsg string) {
	id := r.PathValue("id")
	var ep outboxapi.WebhookEndpoint
	if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(id), nil, &ep); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	q := r.URL.Query()
	f := deliveryFilter{Type: q.Get("type"), EventID: q.Get("eventId"), Status: q.Get("status"), Cursor: q.Get("cursor")}
	var page struct {
		Data       []outboxapi.WebhookDelivery `json:"data"`
		NextCursor *string                     `json:"nextCursor"`
	}
	if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(id)+"/deliveries", f.query(), &page); err != nil {
		if statusOf(err) >= 500 || statusOf(err) == http.StatusNotFound {
			c.fail(w, r, &s, err)
			return
		}
		errMsg, status = "Delivery log: "+err.Error(), statusOf(err)
	}
	var st outboxapi.WebhookStats
	if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(id)+"/stats", nil, &st); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	d := endpointData{Endpoint: ep, Chart: attemptsChart(st), Deliveries: page.Data, Filter: f,
		Statuses: []string{"PENDING", "SUCCEEDED", "FAILED", "DEAD", "DROPPED"}, Profiles: profiles,
		Since: c.opts.Clock.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02T15:04")}
	if page.NextCursor != nil && *page.NextCursor != "" {
		next := f
		next.Cursor = *page.NextCursor
		nq := next.query()
		nq.Del("limit")
		d.NextPage = template.URL("/console/endpoints/" + esc(id) + "?" + nq.Encode()) // built of escaped parts
	}
	if form != nil {
		d.Form = *form
	} else {
		policy, _ := json.Marshal(ep.Policy)
		if string(policy) == "{}" || string(policy) == "null" {
			policy = nil
		}
		d.Form = endpointForm{URL: ep.URL, Events: strings.Join(ep.Events, ", "), Profile: ep.Profile, Policy: string(policy), APIVersion: ep.APIVersion,
			Headers: headerLines(ep.Headers), Channels: strings.Join(ep.Channels, ", "), Filter: filterText(ep.Filter)}
		if ep.RateLimit != nil {
			d.Form.RateLimit = strconv.Itoa(*ep.RateLimit)
		}
	}
	c.render(w, status, "endpoint", view{Title: "Endpoint " + ep.URL, Nav: "endpoints", Session: &s, Notice: notice(r), Error: errMsg, Data: d})
}

// endpointAction runs one of an endpoint's actions through the API.
func (c *Console) endpointAction(w http.ResponseWriter, r *http.Request, s session) {
	id, action := r.PathValue("id"), r.PathValue("action")
	base := "/api/v1/webhooks/" + esc(id)
	reason := url.Values{}
	if v := strings.TrimSpace(r.PostFormValue("reason")); v != "" {
		reason.Set("reason", v)
	}
	back := "/console/endpoints/" + esc(id)
	var err error
	switch action {
	case "edit":
		f := formOf(r)
		events := parseEvents(f.Events)
		policy, perr := parsePolicy(f.Policy)
		if perr != nil {
			c.renderEndpoint(w, r, s, http.StatusUnprocessableEntity, &f, perr.Error())
			return
		}
		if events == nil {
			events = []string{"*"}
		}
		if policy == nil {
			policy = json.RawMessage("{}")
		}
		headers, channels, filter, rate, rerr := f.routing()
		if rerr != nil {
			c.renderEndpoint(w, r, s, http.StatusUnprocessableEntity, &f, rerr.Error())
			return
		}
		var cur outboxapi.WebhookEndpoint
		if _, err := s.api.get(r.Context(), base, nil, &cur); err != nil {
			c.fail(w, r, &s, err)
			return
		}
		if channels == nil {
			channels = []string{}
		}
		if filter == nil {
			filter = json.RawMessage("null")
		}
		body := map[string]any{"url": f.URL, "events": events, "policy": policy, "apiVersion": f.APIVersion,
			"headers": headerChanges(cur.Headers, headers), "channels": channels, "filter": filter, "rateLimit": rate}
		if f.Profile != "" {
			body["profile"] = f.Profile
		}
		if _, err = s.api.do(r.Context(), http.MethodPatch, base, nil, body, nil); err != nil && statusOf(err) < 500 && statusOf(err) != http.StatusNotFound {
			c.renderEndpoint(w, r, s, statusOf(err), &f, err.Error())
			return
		}
		back += "?done=updated"
	case "pause", "resume":
		_, err = s.api.do(r.Context(), http.MethodPost, base+"/"+action, reason, nil, nil)
		back += "?done=" + action + "d"
	case "ping":
		_, err = s.api.do(r.Context(), http.MethodPost, base+"/ping", nil, nil, nil)
		back += "?done=pinged"
	case "rotate":
		q := reason
		if g := strings.TrimSpace(r.PostFormValue("graceHours")); g != "" {
			// The API bounds the grace; the console only turns hours into seconds.
			h, perr := strconv.ParseFloat(g, 64)
			if perr != nil || math.IsNaN(h) || math.IsInf(h, 0) {
				c.renderEndpoint(w, r, s, http.StatusUnprocessableEntity, nil, "grace: a number of hours")
				return
			}
			q.Set("graceSeconds", strconv.FormatInt(int64(math.Round(h*3600)), 10))
		}
		var out outboxapi.WebhookEndpointWithSecret
		if _, err = s.api.do(r.Context(), http.MethodPost, base+"/rotate-secret", q, nil, &out); err == nil {
			c.render(w, http.StatusOK, "secret", view{Title: "Secret rotated", Nav: "endpoints", Session: &s,
				Data: secretData{Endpoint: out.WebhookEndpoint, Secret: out.Secret}})
			return
		}
	case "remove":
		if _, err = s.api.do(r.Context(), http.MethodDelete, base, reason, nil, nil); err == nil {
			http.Redirect(w, r, "/console/endpoints?done=removed", http.StatusSeeOther)
			return
		}
	case "recover":
		since, perr := parseTime(r.PostFormValue("since"))
		if perr != nil {
			c.renderEndpoint(w, r, s, http.StatusUnprocessableEntity, nil, perr.Error())
			return
		}
		q := reason
		if !since.IsZero() {
			q.Set("since", since.Format(time.RFC3339))
		}
		_, err = s.api.do(r.Context(), http.MethodPost, base+"/recover", q, nil, nil)
		back += "?done=recovered"
	default:
		c.renderStatus(w, r, http.StatusNotFound, &s, "no such action")
		return
	}
	if err != nil {
		if statusOf(err) >= 500 || statusOf(err) == http.StatusNotFound {
			c.fail(w, r, &s, err)
			return
		}
		c.renderEndpoint(w, r, s, statusOf(err), nil, err.Error())
		return
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

type deliveryData struct {
	Endpoint outboxapi.WebhookEndpoint
	Delivery outboxapi.WebhookDeliveryDetail
	Live     bool
}

func (c *Console) delivery(w http.ResponseWriter, r *http.Request, s session) {
	c.renderDelivery(w, r, s, http.StatusOK, "")
}

func (c *Console) renderDelivery(w http.ResponseWriter, r *http.Request, s session, status int, errMsg string) {
	id, did := r.PathValue("id"), r.PathValue("did")
	var d outboxapi.WebhookDeliveryDetail
	if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(id)+"/deliveries/"+esc(did), nil, &d); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	var ep outboxapi.WebhookEndpoint
	if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(id), nil, &ep); err != nil && statusOf(err) != http.StatusNotFound {
		c.fail(w, r, &s, err) // a removed endpoint's log stays readable
		return
	}
	c.render(w, status, "delivery", view{Title: "Delivery " + d.ID, Nav: "endpoints", Session: &s, Notice: notice(r), Error: errMsg,
		Data: deliveryData{Endpoint: ep, Delivery: d, Live: d.Status == "PENDING"}})
}

func (c *Console) retry(w http.ResponseWriter, r *http.Request, s session) {
	id, did := r.PathValue("id"), r.PathValue("did")
	q := url.Values{}
	if v := strings.TrimSpace(r.PostFormValue("reason")); v != "" {
		q.Set("reason", v)
	}
	if _, err := s.api.do(r.Context(), http.MethodPost, "/api/v1/webhooks/"+esc(id)+"/deliveries/"+esc(did)+"/retry", q, nil, nil); err != nil {
		if statusOf(err) >= 500 || statusOf(err) == http.StatusNotFound {
			c.fail(w, r, &s, err)
			return
		}
		c.renderDelivery(w, r, s, statusOf(err), err.Error())
		return
	}
	http.Redirect(w, r, "/console/endpoints/"+esc(id)+"/deliveries/"+esc(did)+"?done=retried", http.StatusSeeOther)
}

// headerLines writes an endpoint's headers (masked as the API shows them) one
// "Name: value" a line, by name.
func headerLines(h map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(h)) {
		b.WriteString(name + ": " + h[name] + "\n")
	}
	return b.String()
}

// headerChanges is the PATCH of an endpoint's headers from the edit form: the headers
// the form gives with the value shown (masked) keep theirs, the others are set, and
// those the form dropped are removed. So a credential can be kept without being
// known, or replaced by writing the new value.
func headerChanges(shown, form map[string]string) map[string]*string {
	out := map[string]*string{}
	for name, v := range form {
		if shownValue, ok := lookupHeader(shown, name); ok && shownValue == v {
			continue
		}
		out[name] = &v
	}
	for name := range shown {
		if _, ok := lookupHeader(form, name); !ok {
			out[name] = nil
		}
	}
	return out
}

// lookupHeader finds a header by name, whatever its case.
func lookupHeader(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func filterText(f json.RawMessage) string {
	if len(f) == 0 || string(f) == "null" {
		return ""
	}
	return string(f)
}
