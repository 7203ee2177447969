package integration

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// Apps on the official SDKs against the behaviours of jambonz's code the
// compatibility table lists (docs/compatibility.md): each subtest runs one simulated
// call against a path of testdata/node/compat_ws.js (on @jambonz/sdk 0.10 and on
// @jambonz/node-client-ws) or compat_http.js (@jambonz/sdk's and @jambonz/node-client's
// WebhookResponse), and checks the timeline and what the app saw.

// wsSDKs are the two WebSocket SDKs compat_ws.js runs on (its SDK variable).
var wsSDKs = []struct{ name, env string }{{"sdk", "SDK=sdk"}, {"node-client-ws", "SDK=node-client-ws"}}

// httpSDKs are the two webhook SDKs compat_http.js runs on.
var httpSDKs = []struct{ name, env string }{{"sdk", "SDK=sdk"}, {"node-client", "SDK=node-client"}}

// simulateAny runs a scenario whatever its exit status, for calls meant to fail.
func simulateAny(t *testing.T, scenario string, args ...string) timeline {
	t.Helper()
	return runSimulate(t, append([]string{"--scenario", writeScenario(t, scenario)}, args...)...).lines
}

// compat returns the rules of the timeline's compat lines.
func (tl timeline) compat() []string { return tl.values("compat", "rule") }

func TestNodeCompatWebSocket(t *testing.T) {
	t.Parallel()
	for _, sdk := range wsSDKs {
		t.Run(sdk.name, func(t *testing.T) {
			t.Parallel()
			app := startNodeApp(t, "compat_ws.js", sdk.env)

			t.Run("session:new acked without verbs rejects the call", func(t *testing.T) {
				tl := simulateAny(t, "expect:\n  reason: invalid-app-payload\n", app.URL("ws", "/empty-ack"))
				end := tl.one(t, "call.end")
				if end.str("status") != "failed" || end.num("sip_status") != 480 || len(tl.kind("alert")) != 1 ||
					tl.kind("ws.close")[0].num("code") != 1001 {
					t.Errorf("call.end %v, alerts %v, closes %v", end, tl.kind("alert"), tl.kind("ws.close"))
				}
			})
			t.Run("call hook context", func(t *testing.T) {
				simulateAny(t, "sip:\n  headers:\n    X-Customer-Id: c-9\n", app.URL("ws", "/context"))
				ev, ok := app.waitEvent("context", appEventTimeout)
				if !ok || ev.str("customer") != "c-9" || ev.str("synthesizer") != "google" || ev.str("provider") == "" ||
					ev.str("local") == "" || ev["caller_id"] != nil {
					t.Errorf("session:new context %v", ev)
				}
			})
			t.Run("gather finishOnKey and verb_id", func(t *testing.T) {
				simulateScenario(t, "caller:\n  gathers:\n    - digits: \"42#\"\nexpect:\n  status: completed\n", app.URL("ws", "/gather"))
				ev, ok := app.waitEvent("hook", appEventTimeout)
				if !ok || ev.str("digits") != "42" || ev.str("reason") != "dtmfDetected" || ev.str("verb_id") != "menu" {
					t.Errorf("gather hook %v, want digits 42 (no #), verb_id menu", ev)
				}
			})
			t.Run("verb:status names the verb", func(t *testing.T) {
				simulateScenario(t, "expect:\n  status: completed\n", app.URL("ws", "/verb-status"))
				evs, ok := app.waitEvents("verb:status", 7, appEventTimeout)
				if !ok || evs[1].str("name") != "say" || evs[1].str("status_event") != "starting" || evs[1]["verb"] != nil {
					t.Errorf("verb:status %v", evs)
				}
			})
			t.Run("commands jambonz ignores", func(t *testing.T) {
				tl := simulateScenario(t, "caller:\n  gathers:\n    - digits: \"1\"\nexpect:\n  compat: [tag-command, unknown-command]\n", app.URL("ws", "/commands"))
				if got := tl.compat(); len(got) != 2 {
					t.Errorf("compat %v, want tag-command and unknown-command (stream:status is known)", got)
				}
				ev, ok := app.waitEvent("commands-hook", appEventTimeout)
				if !ok || ev["customerData"] != nil {
					t.Errorf("the tag command set customerData: %v", ev)
				}
				// --strict fails the call on a warning the scenario does not name.
				sim := runSimulate(t, "--strict", "--scenario", writeScenario(t, "caller:\n  gathers:\n    - digits: \"1\"\n"), app.URL("ws", "/commands"))
				if sim.exitCode != 1 {
					t.Errorf("simulate --strict exit %d, want 1", sim.exitCode)
				}
				app.noJambonzErrors(t)
			})
			t.Run("a command before the ack is lost", func(t *testing.T) {
				tl := simulateScenario(t, "expect:\n  verbs: [say, hangup]\n  compat: [command-before-ack]\n", app.URL("ws", "/early-command"))
				tl.wantVerbs(t, "say", "hangup")
			})
			t.Run("alert and sip:decline", func(t *testing.T) {
				tl := simulateAny(t, "expect:\n  reason: sip-decline\n  alerts: [application]\n", app.URL("ws", "/alert-decline"))
				end := tl.one(t, "call.end")
				if end.str("status") != "failed" || end.num("sip_status") != 486 {
					t.Errorf("call.end %v, want failed 486", end)
				}
				evs, ok := app.waitEvents("call:status", 2, appEventTimeout)
				if !ok || evs[0].str("call_status") != "trying" || evs[1].str("call_status") != "failed" || evs[1].str("sip_reason") != "Busy Now" {
					t.Errorf("call:status %v, want trying then failed 486 Busy Now", evs)
				}
			})
			t.Run("a redirect verb opens a new socket with session:redirect", func(t *testing.T) {
				tl := simulateScenario(t, "expect:\n  verbs: [say, redirect, say, hangup]\n  compat: [status-to-previous-app]\n", app.URL("ws", "/first"))
				if n := len(tl.kind("ws.open")); n != 2 {
					t.Errorf("%d sockets, want 2", n)
				}
				ev, ok := app.waitEvent("second", appEventTimeout)
				if !ok || ev.str("type") != "session:redirect" || ev.str("call_sid") == "" {
					t.Errorf("the second app saw %v, want session:redirect first", ev)
				}
			})
		})
	}
}

func TestNodeCompatWebhooks(t *testing.T) {
	t.Parallel()
	for _, sdk := range httpSDKs {
		t.Run(sdk.name, func(t *testing.T) {
			t.Parallel()
			app := startNodeApp(t, "compat_http.js", sdk.env)
			for _, path := range []string{"/none", "/empty"} {
				t.Run("no verbs at "+path+" rejects the call", func(t *testing.T) {
					tl := simulateAny(t, "expect:\n  reason: invalid-app-payload\n  alerts: [invalid-app-payload]\n", app.URL("http", path))
					if end := tl.one(t, "call.end"); end.num("sip_status") != 480 {
						t.Errorf("call.end %v, want 480", end)
					}
				})
			}
			t.Run("jambonz's hello-world reads the speech defaults", func(t *testing.T) {
				simulateScenario(t, "expect:\n  verbs: [say, hangup]\n", app.URL("http", "/hello-world"))
				if ev, ok := app.waitEvent("hello-world", appEventTimeout); !ok || ev.str("vendor") != "google" {
					t.Errorf("hello-world saw %v", ev)
				}
			})
			t.Run("an action hook answering a web page keeps the verbs", func(t *testing.T) {
				simulateScenario(t, "caller:\n  gathers:\n    - digits: \"1\"\nexpect:\n  verbs: [gather, say, hangup]\n  compat: [action-hook-not-verbs]\n  no_alerts: [invalid-app-payload]\n", app.URL("http", "/page"))
			})
			t.Run("early media does not answer", func(t *testing.T) {
				tl := simulateAny(t, "status_hook: /status\nexpect:\n  status: failed\n", app.URL("http", "/early"))
				if end := tl.one(t, "call.end"); end.num("sip_status") != 603 {
					t.Errorf("call.end %v, want 603", end)
				}
				for _, s := range tl.values("call.status", "status") {
					if s == "in-progress" {
						t.Errorf("answered: %v", tl.values("call.status", "status"))
					}
				}
			})
			t.Run("gather maxDigits, verb_id and trying", func(t *testing.T) {
				simulateScenario(t, "status_hook: /status\ncaller:\n  gathers:\n    - digits: \"123456\"\nexpect:\n  status: completed\n", app.URL("http", "/gather"))
				if ev, ok := app.waitEvent("pin", appEventTimeout); !ok || ev.str("digits") != "1234" || ev.str("verb_id") != "pin" {
					t.Errorf("pin hook %v, want 1234 and verb_id pin", ev)
				}
				if evs, ok := app.waitEvents("status", 3, appEventTimeout); !ok || evs[0].str("call_status") != "trying" {
					t.Errorf("status hooks %v, want trying first", evs)
				}
			})
		})
	}
}

// A node driven by @jambonz/node-client: an application created with speech
// settings, env_vars and a ws status hook (which jambonz's API takes); a call of it
// rings (the scenario's answer), is notified trying, ringing, in-progress, and only
// then requests its call hook, which says in-progress and carries the defaults and
// env_vars; a whisper is accepted (jambonz ignores it outside a dial).
func TestNodeCompatREST(t *testing.T) {
	t.Parallel()
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	sdk := startRESTClient(t, p.base)
	acct := p.account()
	A, tok := acct.AccountSid, acct.APIToken
	wsApp := &exampleapp.WSApp{Waiting: true}
	wsSrv := httptest.NewServer(wsApp)
	t.Cleanup(wsSrv.Close)
	wsURL := "ws" + strings.TrimPrefix(wsSrv.URL, "http") + "/ws"

	appSid := decode[string](t, sdk.must(A, tok, "applications", "create", map[string]any{
		"name": "voice", "call_hook": map[string]any{"url": wsURL}, "call_status_hook": map[string]any{"url": wsURL},
		"speech_synthesis_vendor": "elevenlabs", "speech_synthesis_voice": "rachel", "env_vars": map[string]any{"GREETING": "hi"}}))
	sid := decode[string](t, sdk.must(A, tok, "calls", "create", map[string]any{
		"from": "+15550001111", "to": map[string]any{"type": "phone", "number": "+15550002222"}, "application_sid": appSid,
		"scenario": map[string]any{"answer": map[string]any{"after": "1s"}}}))
	waitLiveN(t, wsApp, 1)
	var statuses []string
	var sessionNew map[string]any
	for _, m := range wsApp.Received() {
		var data map[string]any
		_ = json.Unmarshal(m.Data, &data)
		switch m.Type {
		case "call:status":
			if sessionNew == nil && m.CallSid != "" {
				t.Errorf("call:status before session:new carries call_sid %q (jambonz sends none)", m.CallSid)
			}
			statuses = append(statuses, fmt.Sprint(data["call_status"]))
		case "session:new":
			sessionNew = data
		}
	}
	if !slices.Equal(statuses, []string{"trying", "ringing", "in-progress"}) {
		t.Errorf("statuses before session:new %v, want trying, ringing, in-progress", statuses)
	}
	defaults, _ := sessionNew["defaults"].(map[string]any)
	synth, _ := defaults["synthesizer"].(map[string]any)
	env, _ := sessionNew["env_vars"].(map[string]any)
	if sessionNew["call_status"] != "in-progress" || synth["vendor"] != "elevenlabs" || synth["voice"] != "rachel" || env["GREETING"] != "hi" {
		t.Errorf("session:new %v", sessionNew)
	}
	sdk.must(A, tok, "calls", "update", sid, map[string]any{"whisper": map[string]any{"verb": "say", "text": "psst"}})
	sdk.must(A, tok, "calls", "update", sid, map[string]any{"call_status": "completed"})
	c := p.waitCall(acct, sid)
	if c.CallStatus != "completed" || !strings.Contains(c.kinds(), "compat") {
		t.Errorf("call %s, %s, want completed with the whisper's compat warning", c.CallStatus, c.kinds())
	}
}
