package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-voice/switchboard/featureserver/internal/console/consoletest"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// wait bounds every wait of these tests for what the node does on its own (attempts,
// a call's end): generous, as the machine is shared.
const wait = 30 * time.Second

// env is a node with two accounts, A and B, and a headless Chromium.
type env struct {
	t       *testing.T
	node    *consoletest.Node
	a, b    consoletest.Account
	browser context.Context

	mu       sync.Mutex
	problems []string // dialogs, exceptions and console errors the pages raised
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, stopBrowser, err := consoletest.NewBrowser(1280, 800)
	if errors.Is(err, consoletest.ErrNoChromium) {
		testkit.SkipMissing(t, "Chromium", err.Error()+" (.ci/run installs Debian's chromium)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopBrowser)
	node := startNode(t)
	e := &env{t: t, node: node, browser: ctx}
	if e.a, err = node.CreateAccount("Account A"); err != nil {
		t.Fatal(err)
	}
	if e.b, err = node.CreateAccount("Account B"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Listen(ctx, e.watch); err != nil {
		t.Fatal(err)
	}
	return e
}

// watch records what would show a script ran or a page broke: a dialog (alert,
// confirm), an uncaught exception, a console error (a CSP violation is one).
func (e *env) watch(ev any) {
	var p string
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		p = "dialog " + string(ev.Type) + ": " + ev.Message
		go func() {
			_, _ = chromedp.Call(e.browser, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}()
	case *runtime.EventExceptionThrown:
		p = "exception: " + ev.ExceptionDetails.Text
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			p = "console." + string(ev.Type)
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p = "console error: " + ev.Entry.Text + " " + ev.Entry.URL
		}
	}
	if p != "" {
		e.mu.Lock()
		e.problems = append(e.problems, p)
		e.mu.Unlock()
	}
}

func (e *env) noProblems() {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.problems) > 0 {
		e.t.Errorf("the pages raised: %q", e.problems)
	}
	e.problems = nil
}

// do runs browser steps, bounded.
func (e *env) do(steps ...chromedp.Action[chromedp.Void]) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.browser, wait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		e.t.Fatal(err)
	}
}

// open navigates to a console path and returns the document's HTTP status.
func (e *env) open(path string) int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.browser, wait)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(e.node.Base+path))
	if err != nil {
		e.t.Fatalf("open %s: %v", path, err)
	}
	return resp.Status
}

func (e *env) text(sel string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.browser, wait)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("(document.querySelector(%q) || {textContent: '(none)'}).textContent.trim()", sel)))
	if err != nil {
		e.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (e *env) count(sel string) int {
	e.t.Helper()
	n, err := chromedp.Run(e.browser, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) signIn(acct consoletest.Account) {
	e.t.Helper()
	e.open("/console/signin")
	e.do(chromedp.SendKeys(chromedp.CSS("#token"), acct.APIToken))
	ctx, cancel := context.WithTimeout(e.browser, wait)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#signin"))); err != nil {
		e.t.Fatal(err)
	}
	if loc, _ := chromedp.Run(e.browser, chromedp.Location()); !strings.HasSuffix(loc, "/console/") {
		e.t.Fatalf("after signing in the browser is at %s", loc)
	}
}

// endpoint creates an endpoint of acct for rc that retries at once, twice.
func (e *env) endpoint(acct consoletest.Account, rc *consoletest.Receiver) string {
	e.t.Helper()
	var ep struct{ ID string }
	if err := e.node.Do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": rc.URL,
		"policy": map[string]any{"scheduleSeconds": []int{0, 0}, "allowHttp": true}}, &ep); err != nil {
		e.t.Fatal(err)
	}
	return ep.ID
}

// publish publishes an event of acct and returns its delivery to the one endpoint.
func (e *env) publish(acct consoletest.Account, ep string) string {
	e.t.Helper()
	var pub struct {
		Deliveries []struct{ ID string } `json:"deliveries"`
	}
	if err := e.node.Do("POST", "/api/v1/events", acct.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"n": 1}, "endpointId": ep}, &pub); err != nil || len(pub.Deliveries) != 1 {
		e.t.Fatalf("publish: %v %+v", err, pub)
	}
	return pub.Deliveries[0].ID
}

// waitDelivery waits until a delivery has the status.
func (e *env) waitDelivery(acct consoletest.Account, ep, id, status string) {
	e.t.Helper()
	err := consoletest.Poll(wait, "delivery "+id+" "+status, func() (bool, error) {
		var d struct{ Status string }
		err := e.node.Do("GET", "/api/v1/webhooks/"+ep+"/deliveries/"+id, acct.APIToken, nil, &d)
		return d.Status == status, err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// delivery publishes an event of account A to a new endpoint whose receiver answers
// with answer, and waits until the delivery has status.
func (e *env) delivery(answer func(n int) (int, string), status string) (rc *consoletest.Receiver, ep, id string) {
	e.t.Helper()
	rc = receiver(e.t, answer)
	ep = e.endpoint(e.a, rc)
	id = e.publish(e.a, ep)
	e.waitDelivery(e.a, ep, id, status)
	return rc, ep, id
}

func receiver(t *testing.T, answer func(n int) (int, string)) *consoletest.Receiver {
	t.Helper()
	rc, err := consoletest.NewReceiver(answer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestConsoleInABrowser drives the console's pages in headless Chromium.
func TestConsoleInABrowser(t *testing.T) {
	e := newEnv(t)

	t.Run("an unsigned visitor is sent to sign in, a bad token is refused", func(t *testing.T) {
		e.t = t
		e.open("/console/endpoints")
		if loc, _ := chromedp.Run(e.browser, chromedp.Location()); !strings.HasSuffix(loc, "/console/signin") {
			t.Fatalf("at %s, want the sign-in page", loc)
		}
		e.do(chromedp.SendKeys(chromedp.CSS("#token"), "not-a-token"), chromedp.Click(chromedp.CSS("#signin")),
			chromedp.WaitVisible(chromedp.CSS("#error")))
		if got := e.text("#error"); !strings.Contains(got, "no account") {
			t.Fatalf("error %q", got)
		}
		e.mu.Lock()
		e.problems = nil // the 401 document itself is logged as a failed resource
		e.mu.Unlock()
	})

	t.Run("a delivery that failed twice then succeeded shows its three attempts", func(t *testing.T) {
		e.t = t
		_, ep, id := e.delivery(func(n int) (int, string) {
			if n < 2 {
				return 500, `{"error":"try again"}`
			}
			return 200, `{"ok":true}`
		}, "SUCCEEDED")
		e.signIn(e.a)
		e.open("/console/endpoints/" + ep)
		e.do(chromedp.Click(chromedp.CSS("#d-"+id+" a")), chromedp.WaitVisible(chromedp.CSS("#attempts")))
		if n := e.count("#attempts tr.attempt"); n != 3 {
			t.Fatalf("%d attempts shown, want 3", n)
		}
		for i, want := range []string{"500", "500", "200"} {
			row := e.text(fmt.Sprintf("#attempt-%d", i+1))
			if !strings.Contains(row, want) {
				t.Errorf("attempt %d: %q, want HTTP %s", i+1, row, want)
			}
		}
		if got := e.text("#delivery-status"); got != "SUCCEEDED" {
			t.Errorf("status %q", got)
		}
		if got := e.text("#response-1"); got != `{"error":"try again"}` {
			t.Errorf("response body of attempt 1: %q", got)
		}
		// At a glance, the endpoint's chart of the last 24 hours has the three.
		e.open("/console/")
		glance := "#glance-" + ep
		if e.count(glance+" rect.o-http") != 1 || e.count(glance+" rect.o-success") != 1 {
			t.Errorf("the endpoint's chart lacks its failures or its success")
		}
		if legend := e.text(glance + " .legend"); !strings.Contains(legend, "http_5xx 2") || !strings.Contains(legend, "success 1") {
			t.Errorf("the chart's legend %q, want http_5xx 2 and success 1", legend)
		}
		e.noProblems()
	})

	t.Run("retry on a failed delivery makes a new attempt that appears on the page", func(t *testing.T) {
		e.t = t
		rc, ep, id := e.delivery(func(int) (int, string) { return 503, "down" }, "FAILED")
		rc.SetAnswer(func(int) (int, string) { return 204, "" })
		e.signIn(e.a)
		e.open("/console/endpoints/" + ep + "/deliveries/" + id)
		if n := e.count("#attempts tr.attempt"); n != 3 {
			t.Fatalf("%d attempts before the retry, want 3", n)
		}
		// The page after the retry shows the delivery PENDING and refreshes itself
		// (htmx) until the fourth attempt is there.
		e.do(chromedp.Click(chromedp.CSS("#retry")), chromedp.WaitVisible(chromedp.CSS("#attempt-4")))
		if row := e.text("#attempt-4"); !strings.Contains(row, "204") || !strings.Contains(row, "success") {
			t.Fatalf("attempt 4: %q", row)
		}
		e.do(chromedp.WaitVisible(chromedp.CSS("#delivery-status.succeeded")))
		e.noProblems()
	})

	t.Run("a receiver's response body is shown as text and runs no script", func(t *testing.T) {
		e.t = t
		evil := `<script>alert("script ran")</script><img src="x" onerror="alert('img ran')"><b>bold</b>`
		_, ep, id := e.delivery(func(int) (int, string) { return 500, evil }, "FAILED")
		e.signIn(e.a)
		e.open("/console/endpoints/" + ep + "/deliveries/" + id)
		if got := e.text("#response-1"); got != evil {
			t.Fatalf("response body shown as %q, want the text %q", got, evil)
		}
		if n := e.count("#delivery script, #delivery img, #delivery b"); n != 0 {
			t.Fatalf("%d elements of the response body made it into the page", n)
		}
		e.noProblems()
	})

	t.Run("a WebSocket call that dropped and reconnected shows both on its timeline", func(t *testing.T) {
		e.t = t
		app := httptest.NewServer(&exampleapp.WSApp{})
		t.Cleanup(app.Close)
		var created struct {
			CallSid string `json:"call_sid"`
		}
		// Message 1 is session:new, message 2 its ack: the node drops the connection
		// (close 1011) after it, and the call reconnects (docs/call-control.md §9).
		if err := e.node.Do("POST", "/v1/Accounts/"+e.a.AccountSid+"/Calls", e.a.APIToken, testkit.WithSpeech(map[string]any{
			"from": "+15550001", "to": "+15550002",
			"call_hook": map[string]any{"url": "ws" + strings.TrimPrefix(app.URL, "http") + "/ws"},
			"scenario": map[string]any{"caller": map[string]any{"gathers": []any{map[string]any{"digits": "1"}}},
				"faults": []any{map[string]any{"after_message": 2, "close_code": 1011}}},
		}), &created); err != nil {
			t.Fatal(err)
		}
		err := consoletest.Poll(wait, "the call's end", func() (bool, error) {
			var v struct{ Active bool }
			err := e.node.Do("GET", "/v1/Accounts/"+e.a.AccountSid+"/Calls/"+created.CallSid, e.a.APIToken, nil, &v)
			return !v.Active, err
		})
		if err != nil {
			t.Fatal(err)
		}
		e.signIn(e.a)
		e.open("/console/calls")
		e.do(chromedp.Click(chromedp.CSS("#call-"+created.CallSid+" a")), chromedp.WaitVisible(chromedp.CSS("#timeline")))
		drop := e.text(`#timeline g[data-kind="ws.close"] text`)
		reconnect := e.text(`#timeline g[data-kind="ws.reconnect"] text`)
		if drop != "drop 1011" || reconnect != "reconnect #1" {
			t.Fatalf("timeline labels %q and %q, want drop 1011 and reconnect #1", drop, reconnect)
		}
		if n := e.count(`#timeline g[data-kind="ws.open"]`); n != 2 {
			t.Errorf("%d ws.open marks, want 2 (the first connection and the reconnect)", n)
		}
		if n := e.count(`#timeline g[data-kind="hook.attempt"]`); n < 1 {
			t.Errorf("no hook attempt on the timeline")
		}
		e.noProblems()
	})

	t.Run("account B cannot open account A's pages, and a forged cross-site POST is refused", func(t *testing.T) {
		e.t = t
		_, ep, id := e.delivery(func(int) (int, string) { return 200, "{}" }, "SUCCEEDED")
		var calls []struct {
			CallSid string `json:"call_sid"`
		}
		if err := e.node.Do("GET", "/v1/Accounts/"+e.a.AccountSid+"/Calls", e.a.APIToken, nil, &calls); err != nil || len(calls) == 0 {
			t.Fatalf("account A's calls: %v %v", calls, err)
		}
		e.signIn(e.b)
		for _, path := range []string{"/console/endpoints/" + ep, "/console/endpoints/" + ep + "/deliveries/" + id,
			"/console/calls/" + calls[0].CallSid} {
			if code := e.open(path); code != http.StatusNotFound {
				t.Errorf("account B opened %s: %d, want 404", path, code)
			}
		}
		e.mu.Lock()
		e.problems = nil // the 404 documents are logged as failed resources
		e.mu.Unlock()

		e.signIn(e.a)
		forger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/console/endpoints/%s/pause">`+
				`<input type="hidden" name="csrf" value="guessed"><button id="go">Win a prize</button></form>`, e.node.Base, ep)
		}))
		t.Cleanup(forger.Close)
		ctx, cancel := context.WithTimeout(e.browser, wait)
		defer cancel()
		if _, err := chromedp.RunResponse(ctx, chromedp.Navigate(forger.URL)); err != nil {
			t.Fatal(err)
		}
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#go")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusForbidden {
			t.Errorf("the forged POST answered %d, want 403", resp.Status)
		}
		var got struct{ Status string }
		if err := e.node.Do("GET", "/api/v1/webhooks/"+ep, e.a.APIToken, nil, &got); err != nil || got.Status != "ACTIVE" {
			t.Errorf("after the forged POST the endpoint is %q (%v), want ACTIVE", got.Status, err)
		}
	})
}
