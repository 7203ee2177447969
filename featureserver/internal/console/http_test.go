package console_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/console/consoletest"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// The console's forms driven over plain HTTP, as a browser without script posts
// them: what each does is checked through the API.

type client struct {
	t    *testing.T
	node *consoletest.Node
	acct consoletest.Account
	http *http.Client
	csrf string
}

func startNode(t *testing.T) *consoletest.Node {
	t.Helper()
	node, err := consoletest.Start(t.TempDir(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := node.Stop(); err != nil {
			t.Errorf("node stopped with %v", err)
		}
	})
	return node
}

// signedIn creates an account and signs in as it.
func signedIn(t *testing.T, node *consoletest.Node, name string) *client {
	t.Helper()
	acct, err := node.CreateAccount(name)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, node: node, acct: acct, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	code, h, _ := c.post("/console/signin", url.Values{"token": {acct.APIToken}})
	if code != http.StatusSeeOther || h.Get("Location") != "/console/" {
		t.Fatalf("sign in: %d %v", code, h)
	}
	_, _, page := c.get("/console/")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no form token on the signed-in page:\n%s", page)
	}
	c.csrf = m[1]
	return c
}

// createEndpoint creates an endpoint of the signed-in account through the API, at a
// port where nothing listens.
func (c *client) createEndpoint() endpointJSON {
	c.t.Helper()
	var ep endpointJSON
	if err := c.node.Do("POST", "/api/v1/webhooks", c.acct.APIToken, map[string]any{"url": "http://127.0.0.1:9/hook", "policy": map[string]any{"allowHttp": true}}, &ep); err != nil {
		c.t.Fatal(err)
	}
	return ep
}

// startCall creates a call of the signed-in account through the API and returns its sid.
func (c *client) startCall(body map[string]any) string {
	c.t.Helper()
	var created struct {
		CallSid string `json:"call_sid"`
	}
	if err := c.node.Do("POST", "/v1/Accounts/"+c.acct.AccountSid+"/Calls", c.acct.APIToken, body, &created); err != nil {
		c.t.Fatal(err)
	}
	return created.CallSid
}

func (c *client) get(path string) (int, http.Header, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.node.Base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (c *client) post(path string, form url.Values) (int, http.Header, string) {
	c.t.Helper()
	return c.postWith(path, form, nil)
}

func (c *client) postWith(path string, form url.Values, header http.Header) (int, http.Header, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.node.Base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// form posts a form of the console with the session's token.
func (c *client) form(path string, fields ...string) (int, http.Header, string) {
	c.t.Helper()
	v := url.Values{"csrf": {c.csrf}}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Set(fields[i], fields[i+1])
	}
	return c.post(path, v)
}

type endpointJSON struct {
	ID          string         `json:"id"`
	URL         string         `json:"url"`
	Events      []string       `json:"events"`
	Status      string         `json:"status"`
	PauseReason *string        `json:"pauseReason"`
	Policy      map[string]any `json:"policy"`
}

func (c *client) endpoint(id string) (endpointJSON, error) {
	var ep endpointJSON
	err := c.node.Do("GET", "/api/v1/webhooks/"+id, c.acct.APIToken, nil, &ep)
	return ep, err
}

// The session cookie is HttpOnly, SameSite=Strict and scoped to the console; every
// page carries the strict CSP; signing out ends the session.
func TestSessionCookieAndHeaders(t *testing.T) {
	node := startNode(t)
	acct, err := node.CreateAccount("A")
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(node.Base+"/console/signin", url.Values{"token": {acct.APIToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	raw := ""
	for _, sc := range resp.Header.Values("Set-Cookie") {
		raw += sc
	}
	for _, want := range []string{"switchboard_session=", "HttpOnly", "SameSite=Strict", "Path=/console"} {
		if !strings.Contains(raw, want) {
			t.Errorf("Set-Cookie %q lacks %s", raw, want)
		}
	}
	c := signedIn(t, node, "B")
	for _, path := range []string{"/console/", "/console/endpoints", "/console/calls", "/console/signin", "/console/nowhere"} {
		_, h, _ := c.get(path)
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "style-src 'self'") || strings.Contains(csp, "unsafe") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q, nosniff %q", path, csp, h.Get("X-Content-Type-Options"))
		}
	}
	if code, h, _ := c.get("/console"); code/100 != 3 || h.Get("Location") != "/console/" {
		t.Errorf("/console: %d %v, want a redirect to /console/", code, h)
	}
	if code, _, body := c.get("/console/static/htmx.min.js"); code != http.StatusOK || !strings.Contains(body, "htmx") {
		t.Errorf("htmx: %d", code)
	}
	if code, h, _ := c.form("/console/signout"); code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/console/signin") {
		t.Fatalf("sign out: %d %v", code, h)
	}
	if code, h, _ := c.get("/console/endpoints"); code != http.StatusSeeOther || h.Get("Location") != "/console/signin" {
		t.Errorf("after signing out: %d %v, want a redirect to sign in", code, h)
	}
}

// The cookie carries a session id, never the API token; behind an HTTPS proxy it is
// Secure; after signing out, a copy of the old cookie signs nobody in.
func TestSignOutEndsTheSession(t *testing.T) {
	node := startNode(t)
	acct, err := node.CreateAccount("A")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", node.Base+"/console/signin", strings.NewReader(url.Values{"token": {acct.APIToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-Proto", "https")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "switchboard_session" {
			ck = c
		}
	}
	if ck == nil || ck.Value == "" || strings.Contains(ck.Value, acct.APIToken) || !ck.Secure {
		t.Fatalf("session cookie %+v: want a Secure session id that is not the API token", ck)
	}
	c := signedIn(t, node, "B")
	u, _ := url.Parse(node.Base + "/console/")
	old := c.http.Jar.Cookies(u)
	if code, _, _ := c.form("/console/signout"); code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", code)
	}
	c.http.Jar.SetCookies(u, old) // the cookie as it was before signing out
	if code, h, _ := c.get("/console/endpoints"); code != http.StatusSeeOther || h.Get("Location") != "/console/signin" {
		t.Errorf("the old cookie after signing out: %d %v, want a redirect to sign in", code, h)
	}
}

// A POST without the session's form token, or from another origin, changes
// nothing (403); with it, the action is done.
func TestFormsNeedTheirToken(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	ep := c.createEndpoint()
	path := "/console/endpoints/" + ep.ID + "/pause"
	for name, tc := range map[string]struct {
		form   url.Values
		header http.Header
	}{
		"no token":     {url.Values{}, nil},
		"wrong token":  {url.Values{"csrf": {"x" + c.csrf}}, nil},
		"cross-site":   {url.Values{"csrf": {c.csrf}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
		"other origin": {url.Values{"csrf": {c.csrf}}, http.Header{"Origin": {"http://evil.example"}}},
	} {
		if code, _, _ := c.postWith(path, tc.form, tc.header); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, code)
		}
	}
	if got, _ := c.endpoint(ep.ID); got.Status != "ACTIVE" {
		t.Fatalf("a refused POST paused the endpoint: %q", got.Status)
	}
	if code, _, _ := c.form(path); code != http.StatusSeeOther {
		t.Fatalf("pause with the token: %d", code)
	}
	if got, _ := c.endpoint(ep.ID); got.Status != "PAUSED" || got.PauseReason == nil || *got.PauseReason != "MANUAL" {
		t.Fatalf("after pause: %+v", got)
	}
	// The list shows the endpoint's health: its status, and when and why it paused.
	_, _, list := c.get("/console/endpoints")
	row := regexp.MustCompile(`(?s)<tr id="ep-` + ep.ID + `">.*?</tr>`).FindString(list)
	if !strings.Contains(row, ">PAUSED<") || !regexp.MustCompile(`paused \d{4}-\d\d-\d\d [0-9:]+Z \(MANUAL\)`).MatchString(row) {
		t.Fatalf("the list's row of a paused endpoint:\n%s", row)
	}
}

// Every endpoint action of the console does what the API does: create (the secret
// shown once), edit events and policy, a refused edit changing nothing, pause,
// resume, ping, rotate (a new secret shown), recover, remove.
func TestEndpointActions(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	rc, err := consoletest.NewReceiver(func(int) (int, string) { return 204, "" })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })

	code, _, page := c.form("/console/endpoints", "url", rc.URL, "events", "invoice.paid, invoice.failed", "profile", "standard",
		"policy", `{"allowHttp": true, "scheduleSeconds": [0]}`)
	secret := regexp.MustCompile(`id="secret">(whsec_[^<]+)<`).FindStringSubmatch(page)
	if code != http.StatusCreated || secret == nil {
		t.Fatalf("create: %d\n%s", code, page)
	}
	var list struct{ Data []endpointJSON }
	if err := node.Do("GET", "/api/v1/webhooks", c.acct.APIToken, nil, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("endpoints after create: %v %v", list, err)
	}
	id := list.Data[0].ID
	if got := list.Data[0]; strings.Join(got.Events, ",") != "invoice.paid,invoice.failed" || got.Policy["allowHttp"] != true {
		t.Fatalf("created %+v", got)
	}
	if _, _, listPage := c.get("/console/endpoints"); !strings.Contains(listPage, `id="ep-`+id+`"`) || strings.Contains(listPage, secret[1]) {
		t.Fatalf("the list lacks the endpoint or shows its secret again")
	}

	if code, _, page := c.form("/console/endpoints/"+id+"/edit", "url", rc.URL, "events", "invoice.*", "policy", `{"allowHttp": true}`); code != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", code, page)
	}
	if got, _ := c.endpoint(id); strings.Join(got.Events, ",") != "invoice.*" || got.Policy["scheduleSeconds"] != nil {
		t.Fatalf("after edit: %+v", got)
	}
	for _, bad := range [][]string{{"policy", `{"allowHttp": true`}, {"policy", `{"scheduleSeconds": "soon", "allowHttp": true}`}} {
		code, _, page := c.form("/console/endpoints/"+id+"/edit", "url", rc.URL, "events", "x.y", bad[0], bad[1])
		if code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="error"`) {
			t.Errorf("edit with %s=%s: %d", bad[0], bad[1], code)
		}
	}
	if got, _ := c.endpoint(id); strings.Join(got.Events, ",") != "invoice.*" {
		t.Fatalf("a refused edit changed the endpoint: %+v", got)
	}

	for _, step := range []struct{ action, status string }{{"pause", "PAUSED"}, {"resume", "ACTIVE"}} {
		if code, _, _ := c.form("/console/endpoints/" + id + "/" + step.action); code != http.StatusSeeOther {
			t.Fatalf("%s: %d", step.action, code)
		}
		if got, _ := c.endpoint(id); got.Status != step.status {
			t.Fatalf("after %s: %s", step.action, got.Status)
		}
	}
	if code, _, _ := c.form("/console/endpoints/" + id + "/ping"); code != http.StatusSeeOther {
		t.Fatalf("ping: %d", code)
	}
	var ds struct {
		Data []struct{ Type string }
	}
	if err := node.Do("GET", "/api/v1/webhooks/"+id+"/deliveries", c.acct.APIToken, nil, &ds); err != nil || len(ds.Data) != 1 || ds.Data[0].Type != "settings.webhook.ping" {
		t.Fatalf("deliveries after ping: %+v %v", ds, err)
	}
	// Bounds are the API's: the console shows its refusal and changes nothing.
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	for _, bad := range [][]string{{"/rotate", "graceHours", "200"}, {"/rotate", "graceHours", "soon"}, {"/edit", "url", rc.URL, "events", strings.Join(many, ",")}} {
		if code, _, page := c.form("/console/endpoints/"+id+bad[0], bad[1:]...); code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="error"`) {
			t.Errorf("%v: %d, want 422 with the error", bad, code)
		}
	}
	if got, _ := c.endpoint(id); strings.Join(got.Events, ",") != "invoice.*" {
		t.Fatalf("a refused edit changed the endpoint: %+v", got)
	}
	code, _, page = c.form("/console/endpoints/"+id+"/rotate", "graceHours", "1")
	rotated := regexp.MustCompile(`id="secret">(whsec_[^<]+)<`).FindStringSubmatch(page)
	if code != http.StatusOK || rotated == nil || rotated[1] == secret[1] {
		t.Fatalf("rotate: %d, secret %v (was %s)", code, rotated, secret[1])
	}
	if code, _, page := c.form("/console/endpoints/"+id+"/recover", "since", "yesterday"); code != http.StatusUnprocessableEntity || !strings.Contains(page, "not a time") {
		t.Fatalf("recover since yesterday: %d", code)
	}
	if code, _, _ := c.form("/console/endpoints/"+id+"/recover", "since", "2026-01-01T00:00"); code != http.StatusSeeOther {
		t.Fatalf("recover: %d", code)
	}
	var audit struct {
		Data []struct{ Action string }
	}
	if err := node.Do("GET", "/api/v1/audit?endpointId="+id, c.acct.APIToken, nil, &audit); err != nil || len(audit.Data) == 0 || audit.Data[0].Action != "endpoint.recovered" {
		t.Fatalf("audit after recover: %+v %v", audit, err)
	}
	if code, h, _ := c.form("/console/endpoints/"+id+"/remove", "reason", "done"); code != http.StatusSeeOther || h.Get("Location") != "/console/endpoints?done=removed" {
		t.Fatalf("remove: %d %v", code, h)
	}
	if _, err := c.endpoint(id); err == nil {
		t.Fatal("the endpoint is still there")
	}
	if code, _, _ := c.form("/console/endpoints/" + id + "/explode"); code != http.StatusNotFound {
		t.Fatalf("an unknown action: %d", code)
	}
}

// The delivery log is newest first, filters by type, event id and status as the
// API does, and pages through the API's cursor.
func TestDeliveryLogFiltersAndPages(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	ep := c.createEndpoint()
	// Paused: the deliveries wait, so the test reads a log that does not move.
	if err := node.Do("POST", "/api/v1/webhooks/"+ep.ID+"/pause", c.acct.APIToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 30 {
		typ := "a.created"
		if i%10 == 0 {
			typ = "b.created"
		}
		var pub struct {
			Deliveries []struct{ ID string }
		}
		if err := node.Do("POST", "/api/v1/events", c.acct.APIToken, map[string]any{"id": fmt.Sprintf("ev-%02d", i), "type": typ, "data": i}, &pub); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pub.Deliveries[0].ID)
	}
	rows := regexp.MustCompile(`<tr id="d-([^"]+)"`)
	_, _, page := c.get("/console/endpoints/" + ep.ID)
	first := rows.FindAllStringSubmatch(page, -1)
	if len(first) != 25 || first[0][1] != ids[29] {
		t.Fatalf("first page: %d rows, first %v; want 25, newest (%s) first", len(first), first[:1], ids[29])
	}
	next := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(page)
	if next == nil {
		t.Fatal("no next page link")
	}
	_, _, page = c.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	second := rows.FindAllStringSubmatch(page, -1)
	if len(second) != 5 || second[4][1] != ids[0] {
		t.Fatalf("second page: %d rows, want the 5 oldest", len(second))
	}
	_, _, page = c.get("/console/endpoints/" + ep.ID + "?type=b.created")
	if n := len(rows.FindAllStringSubmatch(page, -1)); n != 3 {
		t.Fatalf("type=b.created: %d rows, want 3", n)
	}
	_, _, page = c.get("/console/endpoints/" + ep.ID + "?eventId=ev-07")
	if got := rows.FindAllStringSubmatch(page, -1); len(got) != 1 || got[0][1] != ids[7] {
		t.Fatalf("eventId=ev-07: %v", got)
	}
	_, _, page = c.get("/console/endpoints/" + ep.ID + "?status=SUCCEEDED")
	if n := len(rows.FindAllStringSubmatch(page, -1)); n != 0 {
		t.Fatalf("status=SUCCEEDED: %d rows, want none", n)
	}
	if code, _, page := c.get("/console/endpoints/" + ep.ID + "?status=SOMETIMES"); code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="error"`) {
		t.Fatalf("status=SOMETIMES: %d, want the API's 422", code)
	}
}

// A running call shows live control; a redirect moves it to another application, a
// redirect the API refuses shows its error, hanging up ends it (the API's reason
// api-hangup); at a glance counts both calls by status.
func TestCallLiveControl(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	app := httptest.NewServer(&exampleapp.WSApp{Waiting: true})
	t.Cleanup(app.Close)
	wsURL := "ws" + strings.TrimPrefix(app.URL, "http") + "/ws"
	sid := c.startCall(testkit.WithSpeech(map[string]any{"from": "a", "to": "b", "call_hook": map[string]any{"url": wsURL}}))
	path := "/console/calls/" + sid
	_, _, page := c.get(path)
	if !strings.Contains(page, `id="live-control"`) || !strings.Contains(page, `hx-trigger="every 1s"`) {
		t.Fatalf("a running call's page lacks live control:\n%s", page)
	}
	if _, _, list := c.get("/console/calls"); !strings.Contains(list, `id="call-`+sid+`"`) {
		t.Fatal("the call list lacks the call")
	}
	// One call is "1 call", not "1 calls".
	if _, _, glance := c.get("/console/"); !strings.Contains(glance, "<p>1 call, 1 running.") {
		t.Fatalf("at a glance with one running call:\n%s", glance)
	}
	if code, _, page := c.form(path+"/redirect", "url", "ftp://nowhere"); code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="error"`) {
		t.Fatalf("redirect to ftp: %d", code)
	}
	// A redirect moves the call to another application: this one hangs up.
	hangupApp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(hangupApp.Close)
	second := c.startCall(testkit.WithSpeech(map[string]any{"from": "a", "to": "b", "call_hook": map[string]any{"url": wsURL}}))
	if code, _, _ := c.form("/console/calls/"+second+"/redirect", "url", hangupApp.URL+"/next"); code != http.StatusSeeOther {
		t.Fatalf("redirect: %d", code)
	}
	if err := consoletest.Poll(wait, "the redirected call's end", func() (bool, error) {
		var v struct {
			Active bool
			Reason string
		}
		err := node.Do("GET", "/v1/Accounts/"+c.acct.AccountSid+"/Calls/"+second, c.acct.APIToken, nil, &v)
		return !v.Active && v.Reason == "hangup-verb", err
	}); err != nil {
		t.Fatal(err)
	}

	if code, _, _ := c.form(path + "/hangup"); code != http.StatusSeeOther {
		t.Fatalf("hangup: %d", code)
	}
	var v struct {
		Active     bool
		Reason     string
		CallStatus string `json:"call_status"`
	}
	err := consoletest.Poll(wait, "the call's end", func() (bool, error) {
		err := node.Do("GET", "/v1/Accounts/"+c.acct.AccountSid+"/Calls/"+sid, c.acct.APIToken, nil, &v)
		return !v.Active && v.Reason == "api-hangup", err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, page = c.get(path)
	if strings.Contains(page, `id="live-control"`) || strings.Contains(page, "hx-trigger") {
		t.Fatal("an ended call still shows live control")
	}
	_, _, page = c.get("/console/")
	sum := 0
	for _, m := range regexp.MustCompile(`<title>[a-z-]+: (\d+)</title>`).FindAllStringSubmatch(page, -1) {
		n := 0
		fmt.Sscan(m[1], &n)
		sum += n
	}
	if !strings.Contains(page, `<g data-status="`+v.CallStatus+`">`) || sum != 2 || !strings.Contains(page, "2 calls, 0 running") {
		t.Fatalf("at a glance lacks the %s call:\n%s", v.CallStatus, page)
	}
}

// A call's page links its status-hook deliveries to their pages in the delivery log.
func TestCallStatusDeliveries(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(app.Close)
	status, err := consoletest.NewReceiver(func(int) (int, string) { return 200, "{}" })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { status.Close() })
	sid := c.startCall(testkit.WithSpeech(map[string]any{"from": "a", "to": "b", "call_hook": map[string]any{"url": app.URL + "/app"},
		"call_status_hook": map[string]any{"url": status.URL}}))
	err = consoletest.Poll(wait, "the call's end", func() (bool, error) {
		var v struct{ Active bool }
		err := node.Do("GET", "/v1/Accounts/"+c.acct.AccountSid+"/Calls/"+sid, c.acct.APIToken, nil, &v)
		return !v.Active, err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, page := c.get("/console/calls/" + sid)
	links := regexp.MustCompile(`<a href="(/console/endpoints/[^"]+/deliveries/[^"]+)">`).FindAllStringSubmatch(page, -1)
	if len(links) == 0 {
		t.Fatalf("the call's page lists no status delivery:\n%s", page)
	}
	if code, _, d := c.get(links[0][1]); code != http.StatusOK || !strings.Contains(d, `id="attempts"`) {
		t.Fatalf("status delivery %s: %d", links[0][1], code)
	}
}

// The endpoint forms carry its headers, channels, filter, rate limit and, at
// creation, its signing key: an ed25519 key shows its public key; the page shows the
// headers masked; an edit that leaves a masked value as shown keeps the header's
// value (the next attempt still sends it), one that drops a header removes it; what
// the API refuses is shown and changes nothing.
func TestEndpointRoutingForms(t *testing.T) {
	node := startNode(t)
	c := signedIn(t, node, "A")
	got := make(chan http.Header, 4)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)

	signing, public := webhooksig.NewKeyPair()
	code, _, page := c.form("/console/endpoints", "url", rc.URL, "policy", `{"allowHttp": true}`, "secret", signing,
		"headers", "Authorization: Bearer sk_live_0123456789abcdef\nX-Tenant: acme", "channels", "eu, us",
		"filter", `{"amount": {"$gte": 10}}`, "rateLimit", "20")
	if code != http.StatusCreated || !strings.Contains(html.UnescapeString(page), `id="secret">`+public+`<`) || !strings.Contains(page, "public key") {
		t.Fatalf("create: %d\n%s", code, page)
	}
	var list struct{ Data []outboxapi.WebhookEndpoint }
	if err := node.Do("GET", "/api/v1/webhooks", c.acct.APIToken, nil, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("endpoints: %v %v", list, err)
	}
	ep := list.Data[0]
	if ep.RateLimit == nil || *ep.RateLimit != 20 || strings.Join(ep.Channels, ",") != "eu,us" || string(ep.Filter) != `{"amount":{"$gte":10}}` {
		t.Fatalf("created %+v", ep)
	}
	_, _, page = c.get("/console/endpoints/" + ep.ID)
	for _, want := range []string{"Authorization: Bearer ****cdef", "X-Tenant: acme", `id="ep-channels">eu, us<`, `id="ep-rate">20 deliveries/s`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the endpoint page lacks %q", want)
		}
	}
	if strings.Contains(page, "sk_live_0123456789abcdef") {
		t.Fatal("the endpoint page shows the credential")
	}

	// Keep the masked Authorization as shown, change X-Tenant, add one, drop the filter.
	if code, _, page := c.form("/console/endpoints/"+ep.ID+"/edit", "url", rc.URL, "policy", `{"allowHttp": true}`,
		"headers", "Authorization: Bearer ****cdef\nX-Tenant: globex\nX-New: 1", "channels", "", "filter", "", "rateLimit", ""); code != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", code, page)
	}
	var after outboxapi.WebhookEndpoint
	if err := node.Do("GET", "/api/v1/webhooks/"+ep.ID, c.acct.APIToken, nil, &after); err != nil {
		t.Fatal(err)
	}
	if after.RateLimit != nil || len(after.Channels) != 0 || string(after.Filter) != "null" || after.Headers["X-Tenant"] != "globex" || after.Headers["X-New"] != "1" {
		t.Fatalf("after edit: %+v", after)
	}
	if code, _, _ := c.form("/console/endpoints/" + ep.ID + "/ping"); code != http.StatusSeeOther {
		t.Fatalf("ping: %d", code)
	}
	h := <-got
	if h.Get("Authorization") != "Bearer sk_live_0123456789abcdef" || h.Get("X-Tenant") != "globex" {
		t.Fatalf("the ping after the edit sent %v", h)
	}

	for _, bad := range [][]string{{"headers", "Host: evil.example"}, {"headers", "no colon"}, {"filter", `{"amount": {"$gt": "x"}}`},
		{"filter", "{"}, {"rateLimit", "fast"}, {"rateLimit", "20000"}} {
		code, _, page := c.form("/console/endpoints/"+ep.ID+"/edit", "url", rc.URL, "policy", `{"allowHttp": true}`, bad[0], bad[1])
		if code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="error"`) {
			t.Errorf("edit with %s=%q: %d", bad[0], bad[1], code)
		}
	}
	var unchanged outboxapi.WebhookEndpoint
	if err := node.Do("GET", "/api/v1/webhooks/"+ep.ID, c.acct.APIToken, nil, &unchanged); err != nil || unchanged.Headers["X-New"] != "1" || len(unchanged.Headers) != 3 {
		t.Fatalf("a refused edit changed the endpoint: %+v %v", unchanged, err)
	}
}
