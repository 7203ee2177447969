package integration

import (
	"strconv"
	"strings"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

// nodeHTTPSecret is the webhook signing secret shared by the simulator and the app.
const nodeHTTPSecret = "wh-secret-for-tests"

// TestNodeHTTPWebhookResponse: an HTTP app built with @jambonz/node-client's
// WebhookResponse verifies every hook's Jambonz-Signature with the SDK's
// verifyJambonzSignature; the call hook answers say + gather, the action hook hangup,
// and the status hook receives the call's status changes.
func TestNodeHTTPWebhookResponse(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "http_app.js", "WEBHOOK_SECRET="+nodeHTTPSecret)
	tl := simulateScenario(t, `
caller:
  gathers:
    - digits: "3"
`, "--secret", nodeHTTPSecret, "--from", "+15557770000",
		"--status-hook", "/status", app.URL("http", "/call"))
	byURL := map[string]timeline{}
	for _, a := range tl.kind("hook.attempt") {
		byURL[a.str("url")] = append(byURL[a.str("url")], a)
		if a.str("transport") != "http" || a.num("attempt") != 1 || a.str("class") != "success" {
			t.Errorf("hook.attempt %v, want a first attempt over http that succeeded", a)
		}
	}
	for path, status := range map[string]float64{"/call": 200, "/action": 200, "/status": 204} {
		as := byURL[app.URL("http", path)]
		if len(as) == 0 || as[0].num("status") != status {
			t.Errorf("hook attempts to %s = %v, want answered %v", path, as, status)
		}
	}
	tl.inOrder(t,
		step("hook.attempt", "url", app.URL("http", "/call")),
		step("verb.start", "verb", "say"),
		step("verb.start", "verb", "gather"),
		step("hook.attempt", "url", app.URL("http", "/action")),
		step("verb.start", "verb", "say"),
		step("verb.start", "verb", "hangup"),
		step("call.end", "status", "completed"),
	)
	tl.wantVerbs(t, "say", "gather", "say", "hangup")
	if alerts := tl.kind("alert"); len(alerts) != 0 {
		t.Errorf("alerts: %v", alerts)
	}

	if rejected := app.Named("signature-rejected"); len(rejected) != 0 {
		t.Errorf("the SDK rejected signatures: %v", rejected)
	}
	callHook, ok := app.waitEvent("call-hook", appEventTimeout)
	if !ok {
		t.Fatal("app never got the call hook")
	}
	callSid := tl.one(t, "call.start").str("call_sid")
	if callHook.str("call_sid") != callSid || callHook.str("from") != "+15557770000" || callHook.str("direction") != "inbound" {
		t.Errorf("call hook payload = %v, want call_sid %s from +15557770000 inbound", callHook, callSid)
	}
	action, ok := app.waitEvent("action-hook", appEventTimeout)
	if !ok {
		t.Fatal("app never got the action hook")
	}
	if action.str("digits") != "3" || action.str("call_sid") != callSid || action.str("reason") == "" {
		t.Errorf("action hook payload = %v, want digits 3 for call %s", action, callSid)
	}
	statuses, _ := app.waitEvents("status-hook", 2, appEventTimeout)
	var got []string
	for _, s := range statuses {
		got = append(got, s.str("call_status"))
	}
	if len(got) == 0 || got[len(got)-1] != "completed" || !contains(got, "in-progress") {
		t.Errorf("status hook saw %v, want in-progress ... completed", got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestNodeHTTPSignatureRejected: with a wrong secret, or none, the SDK middleware
// refuses the call hook (403) and the node rejects the call with SIP 480 — the check
// on the app's side is real, so the passing test above proves the signature.
func TestNodeHTTPSignatureRejected(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "http_app.js", "WEBHOOK_SECRET="+nodeHTTPSecret)
	for _, tc := range []struct {
		name     string
		args     []string
		appError string
	}{
		{"wrong-secret", []string{"--secret", "not-the-secret"}, "No matching signatures found"},
		{"unsigned", nil, "Missing Jambonz-Signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(app.Named("signature-rejected"))
			sim := runSimulate(t, append(tc.args, app.URL("http", "/call"))...)
			if sim.exitCode != 1 {
				t.Errorf("exit code %d, want 1 (the call failed)", sim.exitCode)
			}
			tl := sim.lines
			attempt := tl.kind("hook.attempt")
			if len(attempt) != 1 || attempt[0].num("status") != 403 || attempt[0].str("class") != "4xx" {
				t.Errorf("hook attempts %v, want one answered 403 (4xx, not retried by default)", attempt)
			}
			end := tl.one(t, "call.end")
			if end.num("sip_status") != 480 || end.str("status") == "completed" {
				t.Errorf("call.end = %v, want the call rejected with 480", end)
			}
			if n := len(tl.kind("verb.start")); n != 0 {
				t.Errorf("%d verbs ran on a rejected call", n)
			}
			rejected, _ := app.waitEvents("signature-rejected", before+1, appEventTimeout)
			if len(rejected) != before+1 || !strings.Contains(rejected[len(rejected)-1].str("error"), tc.appError) {
				t.Errorf("app rejections %v, want one more with %q", rejected, tc.appError)
			}
		})
	}
}
