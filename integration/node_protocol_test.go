package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// Issue 13, Build 3: the protocol as apps built on the official SDKs expect it.

// TestNodeWSFreshConnectionAfterSDK404: a node's WebSocket upgrade answered 404 by an
// @jambonz/node-client-ws app (a path it does not serve) must not poison a kept-alive
// connection: the retry (rp=4xx) gets its own 404 rather than a handshake timeout,
// and the next call to the same app connects and completes.
func TestNodeWSFreshConnectionAfterSDK404(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_protocol.js")
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	failed := p.waitCall(a, p.startCall(a, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL("ws", "/missing#rc=1&rp=4xx")}, "from": "+1555", "to": "+1666",
	})))
	var statuses, classes []string
	for _, e := range failed.events() {
		if e.Kind == "hook.attempt" {
			statuses = append(statuses, itoa(int(e.Status)))
			classes = append(classes, e.Class)
		}
	}
	if strings.Join(statuses, ",") != "404,404" || strings.Join(classes, ",") != "4xx,4xx" || failed.Reason != "ws-connect-failed" {
		t.Errorf("first call %s (%s): attempts %v %v, want two 404 answers (4xx), none a handshake timeout", failed.CallStatus, failed.Reason, statuses, classes)
	}
	next := p.waitCall(a, p.startCall(a, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL("ws", "/verb")}, "from": "+1555", "to": "+1666",
	})))
	if next.CallStatus != "completed" || next.Reason != "hangup-verb" || !strings.Contains(next.kinds(), "ws.open") {
		t.Errorf("next call to the app: %s (%s)\n%s", next.CallStatus, next.Reason, next.kinds())
	}
}

// TestNodeWSRedirectVerbIsSessionRedirect: the redirect verb's hook reaches an SDK app
// as session:redirect (as jambonz sends it), never verb:hook, and the SDK hands it to
// the hook's handler, whose reply moves the call on.
func TestNodeWSRedirectVerbIsSessionRedirect(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_protocol.js")
	tl := simulateScenario(t, "caller: {}\n", app.URL("ws", "/verb"))
	tl.inOrder(t,
		step("verb.start", "verb", "redirect"),
		step("msg.sent", "type", "session:redirect"),
		step("msg.recv", "type", "ack"),
		step("verb.start", "verb", "hangup"),
		step("call.end", "status", "completed"),
	)
	if _, ok := app.waitEvent("hook", appEventTimeout); !ok {
		t.Fatal("the app's /next handler never ran")
	}
	var types []string
	for _, r := range app.Named("raw") {
		types = append(types, r.str("type")+" "+r.str("hook"))
	}
	got := strings.Join(types, ", ")
	if !strings.Contains(got, "session:redirect /next") || strings.Contains(got, "verb:hook") {
		t.Errorf("the app received %s; want session:redirect /next and no verb:hook", got)
	}
	app.noJambonzErrors(t)
}

// TestNodeWSInjectRedirectStringCallHook: the SDK's injectCommand('redirect',
// {call_hook: '/moved'}), a call hook as a string relative to the app, is accepted
// (no jambonz:error) and moves the call within the session: session:redirect /moved.
func TestNodeWSInjectRedirectStringCallHook(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_protocol.js")
	tl := simulateScenario(t, "caller: {}\n", app.URL("ws", "/inject"))
	tl.inOrder(t,
		step("msg.recv", "type", "command"),
		step("msg.sent", "type", "session:redirect"),
		step("msg.recv", "type", "ack"),
		step("verb.start", "verb", "hangup"),
		step("call.end", "status", "completed"),
	)
	for _, a := range tl.kind("alert") {
		t.Errorf("alert: %v", a)
	}
	if hook, ok := app.waitEvent("hook", appEventTimeout); !ok || hook.str("hook") != "/moved" {
		t.Fatalf("the app's /moved handler never ran (%v)", hook)
	}
	app.noJambonzErrors(t)
}

// TestNodeHTTPSignatureOverReserialisedBody: with --secret, data holding & < > (what
// the caller says) still passes the SDK's documented verifier, which checks
// JSON.stringify of the parsed body (express.json() before verifyJambonzSignature):
// the node sends exactly what JSON.stringify writes.
func TestNodeHTTPSignatureOverReserialisedBody(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "http_app.js", "WEBHOOK_SECRET="+nodeHTTPSecret, "VERIFY=parsed")
	said := `R&D <ops> & "more" > less` + "\u2028"
	quoted, _ := json.Marshal(said)
	tl := simulateScenario(t, "caller:\n  gathers:\n    - speech: "+string(quoted)+"\n",
		"--secret", nodeHTTPSecret, "--status-hook", "/status", app.URL("http", "/speech"))
	if rejected := app.Named("signature-rejected"); len(rejected) != 0 {
		t.Fatalf("the SDK's verifier rejected the node's signatures: %v", rejected)
	}
	action, ok := app.waitEvent("action-hook", appEventTimeout)
	if !ok || action.str("transcript") != said {
		t.Fatalf("action hook %v, want the transcript %q", action, said)
	}
	if _, ok := app.waitEvent("status-hook", appEventTimeout); !ok {
		t.Error("no status notification passed the verifier")
	}
	tl.wantVerbs(t, "gather", "say", "hangup")
}

// TestNodeHTTPHTMLAnswerAlerted: a call hook answered 200 with an HTML page (no
// application) raises an invalid-app-payload alert naming the cause, as jambonz's
// "malformed jambonz payload: must be array", and the call ends with that reason.
func TestNodeHTTPHTMLAnswerAlerted(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "http_app.js", "WEBHOOK_SECRET="+nodeHTTPSecret)
	sim := runSimulate(t, "--secret", nodeHTTPSecret, app.URL("http", "/html"))
	if sim.exitCode != 1 {
		t.Errorf("exit code %d, want 1 (the call failed)", sim.exitCode)
	}
	alert := sim.lines.one(t, "alert")
	if alert.str("type") != "invalid-app-payload" || !strings.Contains(alert.str("detail"), "malformed jambonz payload: must be array") ||
		!strings.Contains(alert.str("detail"), "text/html") {
		t.Errorf("alert %v, want invalid-app-payload naming the cause and the HTML type", alert)
	}
	end := sim.lines.one(t, "call.end")
	if end.str("reason") != "invalid-app-payload" || end.num("sip_status") != 480 {
		t.Errorf("call.end %v, want reason invalid-app-payload, SIP 480", end)
	}
	if _, ok := app.waitEvent("html-served", appEventTimeout); !ok {
		t.Error("the app never served its page")
	}
}

// TestNodeUserInfoRefused: an application URL with user:password@ is refused before
// anything is sent, with an error that says where credentials go and never quotes
// the password; the SDK app sees no request.
func TestNodeUserInfoRefused(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "http_app.js", "WEBHOOK_SECRET="+nodeHTTPSecret)
	withCreds := strings.Replace(app.URL("http", "/call"), "http://", "http://alice:hunter2@", 1)
	cmd := exec.Command(switchboardBin, "simulate", "--json", "--secret", nodeHTTPSecret, withCreds)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(stderr.String(), "--username and --password") {
		t.Errorf("simulate: %v, stderr %q; want exit status 2 and a message pointing to --username and --password", err, stderr.String())
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, "hunter2") {
		t.Errorf("simulate echoes the password: %s", out)
	}
	if n := len(app.Named("call-hook")) + len(app.Named("signature-rejected")) + len(app.Named("not-found")); n != 0 {
		t.Errorf("the app got %d requests", n)
	}
}

// TestServeSDKAppFaultsThroughTheNodeEgressRules: on a node, a scenario's faults
// against an @jambonz/node-client-ws app dial through the node's own egress rules
// (startServe allows 127.0.0.0/8 with SWITCHBOARD_EGRESS_ALLOW's flag): the first
// attempt is refused by the network fault, the retry connects, the drop without a
// close frame is repaired and the SDK's session:reconnect handler runs.
func TestServeSDKAppFaultsThroughTheNodeEgressRules(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "ws_reconnect.js")
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	c := p.waitCall(a, p.startCall(a, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": app.URL("ws", "/app#rc=3")}, "from": "+1555", "to": "+1666",
		"scenario": map[string]any{
			"caller":  map[string]any{"gathers": []any{map[string]any{"digits": "7"}}},
			"faults":  []any{map[string]any{"after_message": 5}}, // after trying, ringing, in-progress, session:new and its ack
			"network": map[string]any{"refuse": 1},
		},
	})))
	k := c.kinds()
	if c.CallStatus != "completed" || !strings.Contains(k, "fault hook.attempt hook.retry hook.attempt ws.open") ||
		!strings.Contains(k, "ws.reconnect") {
		t.Errorf("call %s (%s):\n%s", c.CallStatus, c.Reason, k)
	}
	if _, ok := app.waitEvent("session:reconnect", appEventTimeout); !ok {
		t.Error("the SDK app's session:reconnect handler never ran")
	}
	app.noJambonzErrors(t)
}
