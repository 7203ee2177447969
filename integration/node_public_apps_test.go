package integration

import (
	"strings"
	"testing"
)

// jambonz's own public applications, run unmodified but for the test's plumbing
// (testdata/node/public, LICENSE.md says what was changed): public-apps and
// jambonz-node-example-app on @jambonz/node-client's WebhookResponse and express,
// public-apps-ws on its WsRouter and WsSession (of @jambonz/node-client 0.4, where
// the app locks 0.3.3: its async-2, whose sendCommand payload 0.4 refuses, ran by hand
// on 0.3.3), three of the v10-examples on
// @jambonz/sdk. Each case plays one flow of one app and checks what jambonz's code
// would make of it: what the caller hears from its say verbs, in order (a gather's
// prompt is not among them), and how the call ends.
func TestNodePublicApps(t *testing.T) {
	t.Parallel()
	type flow struct {
		name, path, scenario string
		args                 []string
		reason               string
		spoken               []string // substrings of the agent's words, in order
	}
	for _, app := range []struct {
		script, scheme string
		flows          []flow
	}{
		{"public/public_apps.js", "http", []flow{
			// It reads defaults.synthesizer of the call hook (503 without it: the
			// call is rejected).
			{name: "hello-world", path: "/hello-world", reason: "verbs-exhausted",
				spoken: []string{"using the en-US-Standard-C voice from google, and the language code is set to en-US"}},
			// It reads speech.vendor.name (normalizeTranscription's vendor block).
			{name: "echo", path: "/echo", scenario: "caller:\n  gathers:\n    - speech: hello there\n  hangup_after: 20s\n",
				reason: "caller-hangup", spoken: []string{"silence_stream://1000", "You said: hello there.  The confident score was 0.92.",
					"The speech service was provided by google"}},
			{name: "dial", path: "/dial", scenario: "to: \"+15550100\"\ncaller:\n  dials:\n    - duration: 5s\n", reason: "verbs-exhausted"},
		}},
		{"public/node_example_app.js", "http", []flow{
			{name: "gather loop", path: "/gather", scenario: "caller:\n  gathers:\n    - speech: hello there\n  hangup_after: 30s\n",
				reason: "caller-hangup", spoken: []string{"You said: hello there"}},
			{name: "sip-decline", path: "/sip-decline", reason: "sip-decline"},
			{name: "queue wait loop", path: "/queue-test", scenario: "caller:\n  hangup_after: 40s\n", reason: "caller-hangup",
				spoken: []string{"handing you over to an agent", "You are currently fifth in queue", "You are currently fifth in queue"}},
		}},
		{"public/public_apps_ws.js", "ws", []flow{
			{name: "hello-world", path: "/hello-world", args: []string{"--idle-limit", "1s"}, reason: "idle-limit",
				spoken: []string{"welcome to jambones"}},
			// The redirect verb's session:redirect is never acked by WsSession (it
			// knows no such message): the redirect fails and the call ends, as on
			// jambonz (ws-requestor's ack timeout, redirect.js throws).
			{name: "simple-gather", path: "/simple-gather", args: []string{"--ws-ack-timeout", "1s"},
				scenario: "caller:\n  gathers:\n    - speech: hello there\n", reason: "redirect-failed",
				spoken: []string{"You said: hello there"}},
		}},
		{"public/v10_dtmf_menu.js", "ws", []flow{
			{name: "menu", path: "/", scenario: "caller:\n  gathers:\n    - digits: \"7\"\n    - digits: \"2\"\n", reason: "hangup-verb",
				spoken: []string{"Sorry, that is not a valid option.", "You selected support. Thank you for calling. Goodbye."}},
			{name: "no input", path: "/", reason: "hangup-verb", spoken: []string{"We did not receive any input. Goodbye."}},
		}},
		{"public/v10_echo.js", "ws", []flow{
			{name: "echo", path: "/", scenario: "caller:\n  gathers:\n    - speech: hello there\n  hangup_after: 15s\n", reason: "caller-hangup",
				spoken: []string{"You said: hello there. The confidence score was 0.92."}},
		}},
		{"public/v10_dial_outbound.js", "ws", []flow{
			{name: "dial", path: "/", scenario: "caller:\n  gathers:\n    - digits: \"15551234#\"\n  dials:\n    - duration: 5s\n", reason: "hangup-verb",
				spoken: []string{"Dialing 1 5 5 5 1 2 3 4.", "The call has ended. Goodbye."}},
			{name: "busy", path: "/", scenario: "caller:\n  gathers:\n    - digits: \"15551234#\"\n  dials:\n    - status: busy\n", reason: "hangup-verb",
				spoken: []string{"Dialing 1 5 5 5 1 2 3 4.", "The call could not be completed. The status was busy."}},
		}},
	} {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(app.script, "public/"), ".js"), func(t *testing.T) {
			t.Parallel()
			a := startNodeApp(t, app.script)
			for _, f := range app.flows {
				t.Run(f.name, func(t *testing.T) {
					args := append([]string{"--scenario", writeScenario(t, f.scenario)}, f.args...)
					tl := runSimulate(t, append(args, a.URL(app.scheme, f.path))...).lines
					if end := tl.one(t, "call.end"); end.str("reason") != f.reason {
						t.Errorf("call ended %v, want reason %s", end, f.reason)
					}
					spoken := tl.values("agent.spoke", "text")
					at := 0
					for _, want := range f.spoken {
						for at < len(spoken) && !strings.Contains(spoken[at], want) {
							at++
						}
						if at == len(spoken) {
							t.Errorf("the caller never heard %q (in order); heard %q", want, spoken)
							break
						}
						at++
					}
					if alerts := tl.kind("alert"); len(alerts) != 0 && f.reason != "redirect-failed" {
						t.Errorf("alerts %v", alerts)
					}
				})
			}
		})
	}
}
