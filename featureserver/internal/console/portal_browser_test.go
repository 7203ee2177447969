package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-voice/switchboard/featureserver/internal/console/consoletest"
)

// portalLink mints a magic link of acct through the API.
func (e *env) portalLink(token, account string, endpoints ...string) string {
	e.t.Helper()
	var l struct {
		URL string `json:"url"`
	}
	body := map[string]any{}
	if len(endpoints) > 0 {
		body["endpoints"] = endpoints
	}
	if err := e.node.Do("POST", "/v1/Accounts/"+account+"/PortalLinks", token, body, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.URL
}

// embedder serves a page that frames src.
func embedder(t *testing.T, src string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>customer app</title><iframe id="portal" src="%s" width="1000" height="700"></iframe>`, src)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestConsumerPortalInABrowser: a magic link signs a consumer into the portal of one
// endpoint: its page, its deliveries and a retry work, nothing else is reachable
// (another endpoint, calls, the menu), and the link works once. Framed, the portal
// loads inside a page of an origin the account lists and is refused inside any
// other.
func TestConsumerPortalInABrowser(t *testing.T) {
	e := newEnv(t)

	t.Run("a link opens its endpoint's pages, and nothing else, once", func(t *testing.T) {
		e.t = t
		rc, ep, id := e.delivery(func(int) (int, string) { return 503, "down" }, "FAILED")
		otherRC := receiver(t, func(int) (int, string) { return 204, "" })
		other := e.endpoint(e.a, otherRC)
		link := e.portalLink(e.a.APIToken, e.a.AccountSid, ep)
		e.open(strings.TrimPrefix(link, e.node.Base))
		if loc, _ := chromedp.Run(e.browser, chromedp.Location()); !strings.HasSuffix(loc, "/console/endpoints/"+ep) {
			t.Fatalf("the link led to %s", loc)
		}
		if nav := e.text("header nav"); nav != "Endpoints" {
			t.Fatalf("the portal's menu: %q", nav)
		}
		rc.SetAnswer(func(int) (int, string) { return 204, "" })
		e.open("/console/endpoints/" + ep + "/deliveries/" + id)
		e.do(chromedp.Click(chromedp.CSS("#retry")), chromedp.WaitVisible(chromedp.CSS("#delivery-status.succeeded")))
		e.open("/console/endpoints")
		if e.count("#ep-"+ep) != 1 || e.count("#ep-"+other) != 0 || e.count("#create-endpoint") != 0 {
			t.Fatalf("the portal's endpoint list shows the wrong endpoints or the create form")
		}
		for path, want := range map[string]int64{"/console/endpoints/" + other: http.StatusNotFound, "/console/calls": http.StatusForbidden,
			"/console/applications": http.StatusForbidden} {
			if code := e.open(path); code != want {
				t.Errorf("the portal opened %s: %d, want %d", path, code, want)
			}
		}
		e.open("/console/")
		if loc, _ := chromedp.Run(e.browser, chromedp.Location()); !strings.HasSuffix(loc, "/console/endpoints") {
			t.Errorf("the portal's home is %s", loc)
		}
		if code := e.open(strings.TrimPrefix(link, e.node.Base)); code != http.StatusNotFound {
			t.Errorf("the link used again: %d, want 404", code)
		}
		e.mu.Lock()
		e.problems = nil // the refused pages are logged as failed resources
		e.mu.Unlock()
	})

	t.Run("an origin the account lists frames the portal, another cannot", func(t *testing.T) {
		e.t = t
		_, ep, _ := e.delivery(func(int) (int, string) { return 204, "" }, "SUCCEEDED")
		allowed := embedder(t, e.portalLink(e.a.APIToken, e.a.AccountSid, ep))
		if err := e.node.Do("PUT", "/v1/Accounts/"+e.a.AccountSid+"/Portal", e.a.APIToken, map[string]any{"frameAncestors": []string{allowed.URL}}, nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(e.browser, wait)
		defer cancel()
		if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(allowed.URL)); err != nil {
			t.Fatal(err)
		}
		frames, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#portal")))
		if err != nil || len(frames) != 1 {
			t.Fatal(frames, err)
		}
		title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"), chromedp.FromNode(frames[0])))
		if err != nil {
			t.Fatalf("reading the framed portal: %v", err)
		}
		if !strings.Contains(title, "Endpoint") && !strings.Contains(title, "http") {
			t.Fatalf("the framed portal shows %q", title)
		}
		e.noProblems()

		refused := embedder(t, e.portalLink(e.a.APIToken, e.a.AccountSid, ep))
		if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(refused.URL)); err != nil {
			t.Fatal(err)
		}
		err = consoletest.Poll(wait, "the refusal to frame the portal", func() (bool, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			for _, p := range e.problems {
				if strings.Contains(p, "frame-ancestors") || strings.Contains(p, "Refused to frame") {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("a page of an origin the account does not list framed the portal: no refusal in %q", e.problems)
		}
		e.mu.Lock()
		e.problems = nil
		e.mu.Unlock()
	})
}
