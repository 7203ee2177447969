package callctl_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// httpServer is a scriptable webhook application: routes map a path to a handler;
// every request is recorded.
type httpServer struct {
	mu       sync.Mutex
	routes   map[string]http.HandlerFunc
	requests []recorded
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
	payload      map[string]any
}

func (h *httpServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
	_ = json.Unmarshal(body, &rec.payload)
	if r.Method == http.MethodGet {
		rec.payload = map[string]any{}
		for k, v := range r.URL.Query() {
			rec.payload[k] = v[0]
		}
	}
	h.mu.Lock()
	h.requests = append(h.requests, rec)
	route := h.routes[r.URL.Path]
	h.mu.Unlock()
	if route == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	route(w, r)
}

func (h *httpServer) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		out = append(out, r.path)
	}
	return out
}

func (h *httpServer) last(path string) recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.requests) - 1; i >= 0; i-- {
		if h.requests[i].path == path {
			return h.requests[i]
		}
	}
	return recorded{}
}

// all returns the requests to path, in order.
func (h *httpServer) all(path string) []recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []recorded
	for _, r := range h.requests {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func verbsReply(vs ...map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(vs)
	}
}

func statusReply(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func newHTTP(t *testing.T, routes map[string]http.HandlerFunc) (*httpServer, string) {
	h := &httpServer{routes: routes}
	return h, serve(t, h, false)
}

// docs/call-control.md §6 row 1: the initial webhook failing rejects the call with
// WebhookErrorReturn (480 by default, or as configured) and raises an alert.
func TestHTTPCallHookFailureRejects(t *testing.T) {
	for _, sip := range []int{0, 503} {
		_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": statusReply(500)})
		o := baseOptions(t, url+"/call")
		o.WebhookErrorReturn = sip
		r := run(t, o)
		want := sip
		if want == 0 {
			want = 480
		}
		wantEnd(t, r, callctl.StatusFailed, callctl.ReasonCallHookFailed, want)
		if !hasAlert(r, callctl.AlertWebhookConnectionFailure) || len(r.Verbs) != 0 {
			t.Fatalf("alerts %v verbs %v", r.Alerts, r.Verbs)
		}
	}
}

// A call's final status carries the reason phrase of its final SIP status, not the
// "Trying" of its start; a sip:decline's own reason wins, and without one the call
// keeps the reason it had, as jambonz's updateCallStatus does.
func TestFinalStatusSIPReason(t *testing.T) {
	for _, tc := range []struct {
		name   string
		call   http.HandlerFunc
		status float64
		reason string
	}{
		{"call hook fails", statusReply(500), 480, "Temporarily Unavailable"},
		{"declined", verbsReply(map[string]any{"verb": "sip:decline", "status": 486}), 486, "Trying"},
		{"declined with a reason", verbsReply(map[string]any{"verb": "sip:decline", "status": 603, "reason": "Gone fishing"}), 603, "Gone fishing"},
		{"completed", verbsReply(map[string]any{"verb": "answer"}, hangupVerb), 200, "OK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, url := newHTTP(t, map[string]http.HandlerFunc{"/call": tc.call})
			o := baseOptions(t, url+"/call")
			o.StatusHookURL = "/status"
			run(t, o)
			final := app.last("/status").payload
			if final["sip_status"] != tc.status || final["sip_reason"] != tc.reason {
				t.Errorf("final status sip_status %v sip_reason %v, want %v %q", final["sip_status"], final["sip_reason"], tc.status, tc.reason)
			}
		})
	}
}

// docs/call-control.md §1–2: an HTTP hook's own fragment: rc=2&rp=5xx retries a 500 twice
// with the ramp, on the simulated clock; success only for 200, 202 or 204.
func TestHTTPRetriesOnSimulatedClock(t *testing.T) {
	n := 0
	var mu sync.Mutex
	_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k < 3 {
			w.WriteHeader(500)
			return
		}
		verbsReply(hangupVerb)(w, r)
	}})
	r := run(t, baseOptions(t, url+"/call#rc=2&rp=5xx"))
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonAppHangup, 603)
	if got := retryDelays(r); !slices.Equal(got, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Fatalf("delays %v", got)
	}
	// The call's real clock stands still (baseOptions) and the shared client never
	// slept (it would fail the test): the 1.5 s are the call's simulated time.
	if r.Duration != 1500*time.Millisecond {
		t.Fatalf("simulated %v, want the 1.5 s of delays", r.Duration)
	}
	var statuses []int
	for _, e := range r.Timeline {
		if e.Kind == callctl.KindHookAttempt {
			statuses = append(statuses, e.HTTPStatus)
		}
	}
	if !slices.Equal(statuses, []int{500, 500, 200}) {
		t.Fatalf("attempt statuses %v", statuses)
	}
}

// docs/call-control.md §3: 201 and 3xx are failures; a 3xx is not followed.
func TestHTTPOnlyAccepted200202204(t *testing.T) {
	for _, code := range []int{201, 302} {
		srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(code)
		}})
		r := run(t, baseOptions(t, url+"/call"))
		wantEnd(t, r, callctl.StatusFailed, callctl.ReasonCallHookFailed, 480)
		if slices.Contains(srv.paths(), "/elsewhere") {
			t.Fatal("redirect followed")
		}
	}
	for _, code := range []int{200, 202, 204} {
		_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": statusReply(code)})
		r := run(t, baseOptions(t, url+"/call"))
		// No verbs: jambonz rejects the call (lib/middleware.js: "malformed jambonz
		// payload: must be array"), as for any call hook that gives none.
		wantEnd(t, r, callctl.StatusFailed, callctl.ReasonInvalidPayload, 480)
		if !hasAlert(r, callctl.AlertInvalidAppPayload) {
			t.Errorf("%d without verbs: no invalid-app-payload alert: %v", code, r.Alerts)
		}
	}
}

// docs/call-control.md §3: the response: JSON verbs; a body of another content type
// (issue 13: an HTML page, JSON sent as text/plain), invalid JSON or invalid verbs are
// invalid-app-payload, alerted with the cause (the call is rejected at the call hook).
func TestHTTPResponseBodies(t *testing.T) {
	typed := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = []string{ct}
			if ct == "" {
				w.Header()["Content-Type"] = nil // not sniffed
			}
			_, _ = io.WriteString(w, body)
		}
	}
	text := typed("text/plain", `[{"verb":"say","text":"x"}]`)
	badJSON := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"verb":"say",`)
	}
	unknownProp := verbsReply(map[string]any{"verb": "say", "text": "x", "colour": "blue"})
	for name, tc := range map[string]struct {
		h      http.HandlerFunc
		reason string
		alert  bool
	}{
		"text/plain":       {text, callctl.ReasonInvalidPayload, true},
		"html":             {typed("text/html; charset=utf-8", "<html><body>It works!</body></html>"), callctl.ReasonInvalidPayload, true},
		"no content type":  {typed("", "ok"), callctl.ReasonInvalidPayload, true},
		"blank text":       {typed("text/plain", " \r\n"), callctl.ReasonInvalidPayload, true},
		"empty array":      {typed("application/json", "[]"), callctl.ReasonInvalidPayload, true},
		"invalid JSON":     {badJSON, callctl.ReasonInvalidPayload, true},
		"unknown property": {unknownProp, callctl.ReasonInvalidPayload, true},
	} {
		t.Run(name, func(t *testing.T) {
			_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": tc.h})
			r := run(t, baseOptions(t, url+"/call"))
			if r.Reason != tc.reason || hasAlert(r, callctl.AlertInvalidAppPayload) != tc.alert {
				t.Fatalf("reason %s alerts %v", r.Reason, r.Alerts)
			}
			if tc.alert && !strings.Contains(r.Alerts[0].Detail, "colour") && name == "unknown property" {
				t.Fatalf("alert does not name the field: %s", r.Alerts[0].Detail)
			}
			wantCause := map[string]string{"text/plain": `Content-Type "text/plain"`, "html": `Content-Type "text/html; charset=utf-8", body "<html>`,
				"no content type": "no Content-Type"}[name]
			if wantCause != "" && (!strings.Contains(r.Alerts[0].Detail, "malformed jambonz payload: must be array") || !strings.Contains(r.Alerts[0].Detail, wantCause)) {
				t.Fatalf("alert %q does not name the cause (%s)", r.Alerts[0].Detail, wantCause)
			}
			if name == "text/plain" && !strings.Contains(r.Alerts[0].Detail, "send it with Content-Type: application/json") {
				t.Fatalf("alert %q does not say how to fix a JSON body sent as text", r.Alerts[0].Detail)
			}
			if tc.alert && r.SIPStatus != 480 {
				t.Fatalf("SIP status %d, want 480 (JAMBONES_WEBHOOK_ERROR_RETURN)", r.SIPStatus)
			}
		})
	}
}

// docs/call-control.md §1: rp=all retries an unparseable response: a 200 whose verbs
// cannot be used is tried again, at the call hook and at an action hook; under other
// policies it is an invalid-app-payload at once.
func TestHTTPUnusableVerbsRetriedUnderAll(t *testing.T) {
	// Each path answers broken JSON once, then its verbs.
	onceBroken := func(next http.HandlerFunc) http.HandlerFunc {
		var calls atomic.Int32
		return func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `[{"verb":"say",`)
				return
			}
			next(w, r)
		}
	}
	for _, tc := range []struct {
		fragment string
		reason   string
		hooks    []string
	}{
		{"#rc=2&rp=all", callctl.ReasonAppHangup, []string{"/call", "/call", "/g", "/g"}},
		{"#rc=2&rp=5xx,ct", callctl.ReasonInvalidPayload, []string{"/call"}},
	} {
		t.Run(tc.fragment, func(t *testing.T) {
			srv, url := newHTTP(t, map[string]http.HandlerFunc{
				"/call": onceBroken(verbsReply(map[string]any{"verb": "gather", "actionHook": "/g"}, hangupVerb)),
				"/g":    onceBroken(verbsReply(say("thanks"), hangupVerb)),
			})
			o := baseOptions(t, url+"/call"+tc.fragment)
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			r := run(t, o)
			if r.Reason != tc.reason || !slices.Equal(srv.paths(), tc.hooks) {
				t.Fatalf("reason %s, requests %v; want %s, %v", r.Reason, srv.paths(), tc.reason, tc.hooks)
			}
			var classes []string
			for _, e := range r.Timeline {
				if e.Kind == callctl.KindHookAttempt {
					classes = append(classes, e.Class)
				}
			}
			if classes[0] != "unparseable" || hasAlert(r, callctl.AlertInvalidAppPayload) != (tc.reason == callctl.ReasonInvalidPayload) {
				t.Fatalf("attempt classes %v, alerts %v", classes, r.Alerts)
			}
		})
	}
}

// docs/call-control.md §3: headers (User-Agent jambonz, Basic auth, Jambonz-Signature)
// and GET hooks carrying nothing of the call, as jambonz's http-requestor.js sends
// them (only the URL's own query; a get-hook-empty warning); the fragment is never
// sent.
func TestHTTPHeadersAndGET(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(map[string]any{"verb": "gather", "numDigits": 1, "actionHook": map[string]any{"url": "/g?menu=main", "method": "GET"}}, hangupVerb),
	})
	o := baseOptions(t, url+"/call#rc=1")
	o.Username, o.Password, o.Secret = "user", "pw", "sekrit"
	o.Script.Gathers = []callctl.GatherInput{{Digits: "7"}}
	r := run(t, o)
	call := srv.last("/call")
	if ua := call.header.Get("User-Agent"); ua != "jambonz" {
		t.Fatalf("User-Agent %q", ua)
	}
	if u, p, ok := (&http.Request{Header: call.header}).BasicAuth(); !ok || u != "user" || p != "pw" {
		t.Fatal("no basic auth")
	}
	if err := webhooksig.VerifyJambonz("sekrit", call.header.Get("Jambonz-Signature"), call.body, time.Now(), time.Minute); err != nil {
		t.Fatalf("signature: %v", err)
	}
	g := srv.last("/g")
	if g.method != "GET" || len(g.payload) != 1 || g.payload["menu"] != "main" || len(g.body) != 0 {
		t.Fatalf("GET hook %+v, want the URL's own query and nothing else", g)
	}
	if len(r.Compat) != 1 || r.Compat[0].Rule != callctl.CompatGetHookEmpty {
		t.Errorf("compat %v, want one get-hook-empty", r.Compat)
	}
}

// docs/call-control.md §6 row 2: an action hook failing mid-call is alerted and the call
// continues with the verbs it has; a failing status hook changes nothing but an alert.
func TestHTTPActionHookFailureContinues(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call":   verbsReply(map[string]any{"verb": "gather", "actionHook": "/g"}, say("still here"), hangupVerb),
		"/g":      statusReply(503),
		"/status": statusReply(500),
	})
	o := baseOptions(t, url+"/call")
	o.StatusHookURL = "/status"
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"gather", "say", "hangup"}) {
		t.Fatalf("verbs %v", r.Verbs)
	}
	// /g, as a webhook failure and as the gather's invalid-app-payload; /status four
	// times (trying, in-progress, the gather's error notification, completed).
	if n := len(r.Alerts); n != 6 {
		t.Fatalf("alerts %v", r.Alerts)
	}
	if got := srv.paths(); !slices.Equal(got, []string{"/call", "/status", "/status", "/g", "/status", "/status"}) {
		t.Fatalf("requests %v", got)
	}
}

// docs/call-control.md §6 row 2: a dial whose confirm hook fails is declined, as
// jambonz declines it (place-outdial.js _executeApp): the dial ends and its actionHook
// reports the status the leg had, in-progress 200 without a duration; the leg gets no
// completed status; the call continues.
func TestHTTPDialHookFailureEndsDial(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(map[string]any{"verb": "dial", "target": []any{map[string]any{"type": "phone", "number": "+15550001111"}},
			"confirmHook": "/confirm", "actionHook": "/dialed"}, hangupVerb),
		"/confirm": statusReply(500),
	})
	r := run(t, baseOptions(t, url+"/call"))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	d := srv.last("/dialed").payload
	if d["dial_call_status"] != "in-progress" || d["dial_sip_status"] != float64(200) || d["duration"] != nil ||
		d["dial_call_sid"] == nil {
		t.Fatalf("dial action payload %v", d)
	}
	if !hasAlert(r, callctl.AlertWebhookConnectionFailure) {
		t.Fatal("no alert for the confirm hook")
	}
}

// docs/call-control.md §4: an HTTP application's call ends when its verbs run out.
func TestHTTPVerbsRunOut(t *testing.T) {
	_, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(say("only this"))})
	r := run(t, baseOptions(t, url+"/call"))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonVerbsExhausted, 200)
}

// docs/call-control.md §1: a relative hook without a fragment inherits the application
// URL's policy; a hook's own fragment wins (here rc=0: no retry).
func TestHTTPHookPolicyInheritance(t *testing.T) {
	var mu sync.Mutex
	count := map[string]int{}
	flaky := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count[r.URL.Path]++
		n := count[r.URL.Path]
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
	}
	_, url := newHTTP(t, map[string]http.HandlerFunc{
		"/call": verbsReply(map[string]any{"verb": "redirect", "actionHook": "/inherits"},
			map[string]any{"verb": "redirect", "actionHook": "/own#rc=0"}, hangupVerb),
		"/inherits": flaky, "/own": flaky,
	})
	r := run(t, baseOptions(t, url+"/call#rc=2&rp=5xx"))
	// The second redirect's hook fails: the redirect task throws and jambonz stops
	// the call's tasks (the hangup never runs).
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonRedirectFailed, 603)
	mu.Lock()
	defer mu.Unlock()
	if count["/inherits"] != 2 || count["/own"] != 1 {
		t.Fatalf("attempts %v: /inherits should retry (rc=2&rp=5xx inherited), /own not (rc=0)", count)
	}
	if len(r.Alerts) != 1 {
		t.Fatalf("alerts %v", r.Alerts)
	}
}

type collectStatus struct {
	mu       sync.Mutex
	statuses []any
	hook     string
}

func (c *collectStatus) NotifyStatus(_ context.Context, hook fragment.Target, p map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hook = hook.Clean()
	c.statuses = append(c.statuses, p["call_status"])
}

// docs/call-control.md §8: with a StatusNotifier, status notifications are handed over
// (to an outbox) instead of being sent by the call.
func TestHTTPStatusNotifier(t *testing.T) {
	srv, url := newHTTP(t, map[string]http.HandlerFunc{"/call": verbsReply(say("hi"))})
	o := baseOptions(t, url+"/call")
	o.StatusHookURL = "/status#rc=4"
	n := &collectStatus{}
	o.StatusNotifier = n
	run(t, o)
	if !slices.Equal(n.statuses, []any{"trying", "in-progress", "completed"}) || n.hook != url+"/status" {
		t.Fatalf("notified %v to %s", n.statuses, n.hook)
	}
	if slices.Contains(srv.paths(), "/status") {
		t.Fatal("the call sent the status hook itself")
	}
}
