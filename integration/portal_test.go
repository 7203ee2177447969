package integration

import (
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsumerPortalThroughServe drives the consumer portal of the real binary over
// HTTP (docs/outbox.md §9): `switchboard webhooks portal-link` (the account's token)
// and the API (the admin token) mint links; bad input is a 422 naming the field and
// stores nothing; a link opens one session, once; that session sees the endpoints it
// was given and their deliveries, and no other endpoint, call, application or alert;
// its pages may be framed by the origins the account lists, nowhere else.
func TestConsumerPortalThroughServe(t *testing.T) {
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	rc := newHookReceiver(t)
	mk := func(path string) string {
		var ep map[string]any
		if code, raw := p.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + path, "policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
			t.Fatalf("create endpoint: %d %s", code, raw)
		}
		return ep["id"].(string)
	}
	mine, other := mk("/mine"), mk("/other")
	var pub map[string]any
	if code, raw := p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"n": 1}}, &pub); code != http.StatusCreated {
		t.Fatalf("publish: %d %s", code, raw)
	}

	// Bad input: 422 naming the field, nothing stored.
	base := "/v1/Accounts/" + a.AccountSid
	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{base + "/PortalLinks", map[string]any{"ttlSeconds": 5}, "body.ttlSeconds"},
		{base + "/PortalLinks", map[string]any{"endpoints": []string{"ep_nope"}}, "body.endpoints[0]"},
		{base + "/Portal", map[string]any{"frameAncestors": []string{"https://ok.example", "https://bad.example/path"}}, "body.frameAncestors[1]"},
	} {
		method := "POST"
		if strings.HasSuffix(tc.path, "/Portal") {
			method = "PUT"
		}
		code, raw := p.do(method, tc.path, a.APIToken, tc.body, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(raw), tc.field) {
			t.Errorf("%s %v: %d %s, want 422 naming %s", tc.path, tc.body, code, raw, tc.field)
		}
	}
	var settings map[string]any
	if code, _ := p.do("GET", base+"/Portal", a.APIToken, nil, &settings); code != http.StatusOK || len(settings["frameAncestors"].([]any)) != 0 {
		t.Fatalf("portal settings after a refused change: %d %v", code, settings)
	}
	const embedder = "https://app.example.com"
	if code, raw := p.do("PUT", base+"/Portal", serveAdminToken, map[string]any{"frameAncestors": []string{embedder + "/"}}, &settings); code != http.StatusOK ||
		settings["frameAncestors"].([]any)[0] != embedder {
		t.Fatalf("set portal settings with the admin token: %d %s", code, raw)
	}

	// The CLI mints a link confined to one endpoint.
	code, out, errOut := webhooksCLI(t, p, a, "portal-link", "--endpoint", mine, "--ttl", "5m")
	if code != 0 || !strings.HasPrefix(out, p.base+"/console/portal/") {
		t.Fatalf("portal-link: %d %q %q", code, out, errOut)
	}
	link := strings.TrimSpace(out)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Request.URL.Path, "/console/endpoints/"+mine) {
		t.Fatalf("the link led to %d %s, want the endpoint's page", resp.StatusCode, resp.Request.URL)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors "+embedder) || resp.Header.Get("X-Frame-Options") != "" {
		t.Fatalf("CSP %q, X-Frame-Options %q: want frame-ancestors %s and no X-Frame-Options", csp, resp.Header.Get("X-Frame-Options"), embedder)
	}
	// Used once: the link opens nothing more, even for another browser.
	again, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotFound {
		t.Fatalf("the link used again: %d, want 404", again.StatusCode)
	}
	get := func(path string) (int, string) {
		t.Helper()
		r, err := browser.Get(p.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return r.StatusCode, b.String()
	}
	if code, page := get("/console/endpoints"); code != http.StatusOK || !strings.Contains(page, mine) || strings.Contains(page, other) {
		t.Fatalf("the portal's endpoints: %d, shows other %v", code, strings.Contains(page, other))
	}
	for path, want := range map[string]int{
		"/console/endpoints/" + other: http.StatusNotFound, "/console/calls": http.StatusForbidden,
		"/console/applications": http.StatusForbidden, "/console/alerts": http.StatusForbidden,
	} {
		if code, _ := get(path); code != want {
			t.Errorf("the portal opened %s: %d, want %d", path, code, want)
		}
	}

	// The account's own console keeps its X-Frame-Options: DENY.
	own, err := http.Get(p.base + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	own.Body.Close()
	if own.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(own.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("the console's own pages: %v", own.Header)
	}
	// The admin mints a link of the whole account through the API.
	var l map[string]any
	if code, raw := p.do("POST", base+"/PortalLinks", serveAdminToken, map[string]any{}, &l); code != http.StatusCreated || len(l["endpoints"].([]any)) != 0 ||
		!strings.HasPrefix(l["path"].(string), "/console/portal/") {
		t.Fatalf("admin link: %d %s", code, raw)
	}
	if code, _ := p.do("POST", base+"/PortalLinks", "wrong-token-0123456789", map[string]any{}, nil); code != http.StatusUnauthorized {
		t.Fatalf("a link with a wrong token: %d", code)
	}
}
