package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

func (c *Console) routes() {
	m := c.mux
	m.HandleFunc("GET /console/{$}", c.forSession(c.overview))
	m.HandleFunc("GET /console/signin", c.signinPage)
	m.HandleFunc("POST /console/signin", c.signin)
	m.HandleFunc("POST /console/signout", c.forSession(c.signout))
	m.HandleFunc("GET /console/endpoints", c.forSession(c.endpoints))
	m.HandleFunc("POST /console/endpoints", c.forSession(c.createEndpoint))
	m.HandleFunc("GET /console/endpoints/{id}", c.forSession(c.endpoint))
	m.HandleFunc("POST /console/endpoints/{id}/{action}", c.forSession(c.endpointAction))
	m.HandleFunc("GET /console/endpoints/{id}/deliveries/{did}", c.forSession(c.delivery))
	m.HandleFunc("POST /console/endpoints/{id}/deliveries/{did}/retry", c.forSession(c.retry))
	m.HandleFunc("GET /console/calls", c.forSession(c.calls))
	m.HandleFunc("GET /console/calls/{sid}", c.forSession(c.call))
	m.HandleFunc("POST /console/calls/{sid}/{action}", c.forSession(c.callAction))
	m.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		c.renderStatus(w, r, http.StatusNotFound, nil, "no such page")
	})
}

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "signin", view{Title: "Sign in", Notice: notice(r)})
}

// signin checks the token through the API and starts a session for its account.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		c.render(w, http.StatusUnprocessableEntity, "signin", view{Title: "Sign in", Error: "Give the account's API token."})
		return
	}
	account, _, header, err := c.whoami(r.Context(), apiClient{h: c.opts.API, token: token})
	switch statusOf(err) {
	case http.StatusOK:
	case http.StatusUnauthorized:
		c.render(w, http.StatusUnauthorized, "signin", view{Title: "Sign in", Error: "That token belongs to no account."})
		return
	case http.StatusTooManyRequests:
		// The API's limit on failed tokens, counted by this browser's address.
		w.Header().Set("Retry-After", header.Get("Retry-After"))
		c.render(w, http.StatusTooManyRequests, "signin", view{Title: "Sign in",
			Error: "Too many failed sign-ins from your address: wait " + header.Get("Retry-After") + " s and try again."})
		return
	default:
		c.fail(w, r, nil, err)
		return
	}
	if err := c.StartSession(w, r, account, nodestore.HashToken(token)); err != nil {
		c.fail(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

// signout ends the session on every node.
func (c *Console) signout(w http.ResponseWriter, r *http.Request, _ session) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.endSession(r, nodestore.HashToken(ck.Value))
	}
	clearCookie(w, r)
	http.Redirect(w, r, "/console/signin?done=signedout", http.StatusSeeOther)
}

// endpointSummary is an endpoint with its chart of the last 24 hours.
type endpointSummary struct {
	outboxapi.WebhookEndpoint
	Chart chart
}

type overviewData struct {
	Endpoints []endpointSummary
	Calls     barChart
	CallTotal int
	Active    int
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s session) {
	eps, err := c.listEndpoints(r, s)
	if err != nil {
		c.fail(w, r, &s, err)
		return
	}
	d := overviewData{}
	for _, ep := range eps {
		var st outboxapi.WebhookStats
		if _, err := s.api.get(r.Context(), "/api/v1/webhooks/"+esc(ep.ID)+"/stats", nil, &st); err != nil {
			c.fail(w, r, &s, err)
			return
		}
		d.Endpoints = append(d.Endpoints, endpointSummary{WebhookEndpoint: ep, Chart: attemptsChart(st)})
	}
	var cs struct {
		Total    int                       `json:"total"`
		Active   int                       `json:"active"`
		ByStatus []nodeapi.CallStatusCount `json:"by_status"`
	}
	if _, err := s.api.get(r.Context(), "/v1/Accounts/"+esc(s.AccountSid)+"/CallStats", nil, &cs); err != nil {
		c.fail(w, r, &s, err)
		return
	}
	d.Calls, d.CallTotal, d.Active = callsChart(cs.ByStatus), cs.Total, cs.Active
	c.render(w, http.StatusOK, "overview", view{Title: "At a glance", Nav: "overview", Session: &s, Notice: notice(r), Data: d})
}

// listEndpoints reads every endpoint of the account, page by page.
func (c *Console) listEndpoints(r *http.Request, s session) ([]outboxapi.WebhookEndpoint, error) {
	var all []outboxapi.WebhookEndpoint
	cursor := ""
	for {
		q := url.Values{"limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var page struct {
			Data       []outboxapi.WebhookEndpoint `json:"data"`
			NextCursor *string                     `json:"nextCursor"`
		}
		if _, err := s.api.get(r.Context(), "/api/v1/webhooks", q, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return all, nil
		}
		cursor = *page.NextCursor
	}
}
