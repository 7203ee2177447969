package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// webhookTestdata pins the official Standard Webhooks and Svix verifiers from npm.
const webhookTestdata = "testdata/webhooks"

var (
	verifiersOnce    sync.Once
	verifiersNode    string
	verifiersModules string
	verifiersErr     error
)

// requireVerifiers installs the npm verifiers on first use (cached like the SDKs),
// skipping the test without node or npm, and failing it under CI=true.
func requireVerifiers(t *testing.T) (node, modules string) {
	t.Helper()
	verifiersOnce.Do(func() {
		verifiersNode, verifiersModules, verifiersErr = installNodePackages(webhookTestdata, "switchboard-webhook-verifiers-")
	})
	if verifiersErr != nil {
		testkit.SkipMissing(t, "Node.js", fmt.Sprintf("the npm verifiers (standardwebhooks, svix): %v (needs Node.js and npm with access to the npm registry)", verifiersErr))
	}
	return verifiersNode, verifiersModules
}

// hookReceiver is a loopback receiver: each path answers from its script and keeps
// what it got.
type hookReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	scripts map[string]func(n int) (int, string)
	got     map[string][]gotRequest
}

type gotRequest struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{scripts: map[string]func(int) (int, string){}, got: map[string][]gotRequest{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got[req.URL.Path])
		r.got[req.URL.Path] = append(r.got[req.URL.Path], gotRequest{req.Header.Clone(), body})
		script := r.scripts[req.URL.Path]
		r.mu.Unlock()
		code, answer := http.StatusNoContent, ""
		if script != nil {
			code, answer = script(n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) script(path string, s func(n int) (int, string)) {
	r.mu.Lock()
	r.scripts[path] = s
	r.mu.Unlock()
}

func (r *hookReceiver) requests(path string) []gotRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gotRequest(nil), r.got[path]...)
}

// webhooksCLI runs the real binary's `switchboard webhooks ...` against p with a's token.
func webhooksCLI(t *testing.T, p *serveProcess, a serveAccount, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(switchboardBin, append([]string{"webhooks"}, args...)...)
	cmd.Env = append(cleanEnv(), "SWITCHBOARD_URL="+p.base, "SWITCHBOARD_TOKEN="+a.APIToken)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// cliJSON runs a webhooks subcommand with --json, expecting exit 0.
func cliJSON(t *testing.T, p *serveProcess, a serveAccount, args ...string) map[string]any {
	t.Helper()
	code, out, errOut := webhooksCLI(t, p, a, append(args, "--json")...)
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("webhooks %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return m
}

// awaitDelivery polls the delivery through the API (the node is another process:
// nothing signals this one) until it has want status, within a generous deadline.
func awaitDelivery(t *testing.T, p *serveProcess, a serveAccount, ep, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var d map[string]any
	for time.Now().Before(deadline) {
		d = nil
		if code, raw := p.do("GET", "/api/v1/webhooks/"+ep+"/deliveries/"+id, a.APIToken, nil, &d); code != http.StatusOK {
			t.Fatalf("get delivery: %d %s", code, raw)
		}
		if d["status"] == want {
			return d
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("delivery %s is %v, want %s", id, d["status"], want)
	return nil
}

func firstDelivery(t *testing.T, pub map[string]any) string {
	t.Helper()
	ds, _ := pub["deliveries"].([]any)
	if len(ds) != 1 {
		t.Fatalf("published %v, want one delivery", pub)
	}
	return ds[0].(map[string]any)["id"].(string)
}

// TestOutboxAPIEndToEnd drives the outbox API of the real `switchboard serve` and its
// `switchboard webhooks` CLI against a loopback receiver (docs/outbox.md §4): an
// endpoint with a seconds-scale schedule whose receiver fails twice and then
// succeeds shows three attempts with statuses, durations and stored bodies; a ping
// arrives whatever the endpoint's filter and is in its log; a 410 pauses a standard
// endpoint (HTTP_410) and resume releases what it held; a FAILED delivery is retried
// and the retry audited with the token's id; every delivery's signature verifies
// with `switchboard verify` and with the npm verifiers standardwebhooks and svix,
// under both secrets across a rotation.
func TestOutboxAPIEndToEnd(t *testing.T) {
	node, modules := requireVerifiers(t)
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	rc := newHookReceiver(t)
	rc.script("/flaky", func(n int) (int, string) {
		if n < 2 {
			return http.StatusInternalServerError, fmt.Sprintf(`{"attempt":%d,"ok":false}`, n+1)
		}
		return http.StatusOK, `{"ok":true}`
	})

	// Create with the CLI: events filtered, a one-second schedule, http allowed.
	code, out, errOut := webhooksCLI(t, p, a, "create", rc.URL+"/flaky", "--events", "invoice.paid",
		"--policy", `{"scheduleSeconds":[1,1],"allowHttp":true}`)
	if code != 0 || !strings.Contains(out, "secret: whsec_") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	ep := strings.Fields(out)[1]
	secret := strings.TrimSpace(out[strings.Index(out, "secret: ")+len("secret: "):])

	var pub map[string]any
	if code, raw := p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"id": "inv-1001", "type": "invoice.paid", "data": map[string]any{"amount": 42}}, &pub); code != http.StatusCreated {
		t.Fatalf("publish: %d %s", code, raw)
	}
	did := firstDelivery(t, pub)
	d := awaitDelivery(t, p, a, ep, did, "SUCCEEDED")
	attempts := d["attempts"].([]any)
	if len(attempts) != 3 {
		t.Fatalf("attempts %v, want 3", attempts)
	}
	for i, raw := range attempts {
		at := raw.(map[string]any)
		wantStatus, wantBody := 500.0, fmt.Sprintf(`{"attempt":%d,"ok":false}`, i+1)
		if i == 2 {
			wantStatus, wantBody = 200, `{"ok":true}`
		}
		if at["number"] != float64(i+1) || at["status"] != wantStatus || at["responseBody"] != wantBody || at["durationMs"].(float64) <= 0 {
			t.Fatalf("attempt %d: %v", i+1, at)
		}
	}
	if code, out, _ := webhooksCLI(t, p, a, "attempts", ep, did); code != 0 || strings.Count(out, "http_5xx") != 2 || !strings.Contains(out, "success") {
		t.Fatalf("webhooks attempts: %d %s", code, out)
	}

	// Ping: arrives though the endpoint takes invoice.paid only, and is in its log.
	ping := cliJSON(t, p, a, "ping", ep)
	awaitDelivery(t, p, a, ep, ping["id"].(string), "SUCCEEDED")
	var log struct {
		Data []map[string]any `json:"data"`
	}
	p.do("GET", "/api/v1/webhooks/"+ep+"/deliveries?type=settings.webhook.ping", a.APIToken, nil, &log)
	if len(log.Data) != 1 || log.Data[0]["id"] != ping["id"] || log.Data[0]["status"] != "SUCCEEDED" {
		t.Fatalf("the ping in the log: %v", log.Data)
	}

	// A rotation: the old secret keeps signing beside the new one.
	rotated := cliJSON(t, p, a, "rotate-secret", ep)
	newSecret := rotated["secret"].(string)
	ping2 := cliJSON(t, p, a, "ping", ep)
	awaitDelivery(t, p, a, ep, ping2["id"].(string), "SUCCEEDED")
	got := rc.requests("/flaky")
	if len(got) != 5 {
		t.Fatalf("receiver got %d requests, want 3 attempts and 2 pings", len(got))
	}
	for i, req := range got {
		secrets := []string{secret}
		if i == 4 {
			secrets = append(secrets, newSecret)
			if n := len(strings.Fields(req.header.Get("webhook-signature"))); n != 2 {
				t.Fatalf("%d signatures after the rotation, want 2", n)
			}
		}
		for _, s := range secrets {
			verifyWithCLI(t, s, req)
		}
		verifyWithNPM(t, node, modules, secrets, req)
	}

	// 410 pauses a standard endpoint; resume releases the deliveries it held.
	rc.script("/gone", func(int) (int, string) { return http.StatusGone, "" })
	gone := cliJSON(t, p, a, "create", rc.URL+"/gone", "--events", "order.shipped", "--policy", `{"allowHttp":true}`)["id"].(string)
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "order.shipped", "data": 1}, &pub)
	awaitDelivery(t, p, a, gone, firstDelivery(t, pub), "PENDING")
	var paused map[string]any
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if paused = cliJSON(t, p, a, "show", gone); paused["status"] == "PAUSED" {
			break
		}
	}
	if paused["status"] != "PAUSED" || paused["pauseReason"] != "HTTP_410" {
		t.Fatalf("after a 410: %v", paused)
	}
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "order.shipped", "data": 2}, &pub)
	held := firstDelivery(t, pub)
	if d := awaitDelivery(t, p, a, gone, held, "PENDING"); len(d["attempts"].([]any)) != 0 {
		t.Fatalf("a delivery was attempted while paused: %v", d)
	}
	rc.script("/gone", func(int) (int, string) { return http.StatusNoContent, "" })
	if code, out, _ := webhooksCLI(t, p, a, "resume", gone); code != 0 || !strings.Contains(out, "ACTIVE") {
		t.Fatalf("resume: %d %s", code, out)
	}
	awaitDelivery(t, p, a, gone, held, "SUCCEEDED")

	// A FAILED delivery is retried, and the retry is in the audit log.
	rc.script("/once", func(int) (int, string) { return http.StatusServiceUnavailable, "busy" })
	once := cliJSON(t, p, a, "create", rc.URL+"/once", "--events", "job.done", "--policy", `{"maxAttempts":1,"allowHttp":true}`)["id"].(string)
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"type": "job.done", "data": 3}, &pub)
	failed := firstDelivery(t, pub)
	awaitDelivery(t, p, a, once, failed, "FAILED")
	rc.script("/once", func(int) (int, string) { return http.StatusOK, "{}" })
	if code, out, errOut := webhooksCLI(t, p, a, "retry", once, failed, "--reason", "receiver fixed"); code != 0 {
		t.Fatalf("retry: %d %s %s", code, out, errOut)
	}
	if d := awaitDelivery(t, p, a, once, failed, "SUCCEEDED"); len(d["attempts"].([]any)) != 2 {
		t.Fatalf("after the retry: %v", d)
	}
	var audit struct {
		Data []map[string]any `json:"data"`
	}
	p.do("GET", "/api/v1/audit?endpointId="+once, a.APIToken, nil, &audit)
	if len(audit.Data) == 0 || audit.Data[0]["action"] != "delivery.retried" || audit.Data[0]["deliveryId"] != failed ||
		audit.Data[0]["reason"] != "receiver fixed" || !strings.HasPrefix(audit.Data[0]["actor"].(string), "tok_") {
		t.Fatalf("audit %v", audit.Data)
	}
}

// verifyWithCLI checks one received request's signature with `switchboard verify`.
func verifyWithCLI(t *testing.T, secret string, req gotRequest) {
	t.Helper()
	body := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(body, req.body, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--json", "--secret", secret, "--body", body}
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		args = append(args, "-H", h+": "+req.header.Get(h))
	}
	out, err := exec.Command(switchboardBin, args...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(`"valid":true`)) {
		t.Fatalf("switchboard verify: %v %s", err, out)
	}
}

// verifyWithNPM checks one received request with standardwebhooks and svix, each
// with every secret; a whpk_ public key (v1a), which neither library checks, with
// Node's ed25519 as the Standard Webhooks specification defines it (verify.js).
func verifyWithNPM(t *testing.T, node, modules string, secrets []string, req gotRequest) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"secrets": secrets, "body": string(req.body), "headers": map[string]string{
		"webhook-id": req.header.Get("webhook-id"), "webhook-timestamp": req.header.Get("webhook-timestamp"),
		"webhook-signature": req.header.Get("webhook-signature")}})
	cmd := exec.Command(node, filepath.Join(webhookTestdata, "verify.js"))
	cmd.Env = append(cleanEnv(), "NODE_PATH="+modules)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("verify.js: %v %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := 0
	for _, s := range secrets {
		want += 2 // standardwebhooks and svix
		if strings.HasPrefix(s, "whpk_") {
			want-- // node:crypto's ed25519 alone: neither library checks v1a
		}
	}
	if len(lines) != want {
		t.Fatalf("verify.js printed %q", out)
	}
	for _, l := range lines {
		var r struct {
			Library string `json:"library"`
			Secret  int    `json:"secret"`
			Valid   bool   `json:"valid"`
			Error   string `json:"error"`
		}
		if json.Unmarshal([]byte(l), &r) != nil || !r.Valid {
			t.Fatalf("npm verifier: %s", l)
		}
	}
}

// TestOutboxAPIIsolationAndBadInput: on the real node, account B's token gets 404
// for everything of account A's (list, read, retry, ping, publish into), and bad
// input is a problem document naming the field, creating nothing.
func TestOutboxAPIIsolationAndBadInput(t *testing.T) {
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a, b := p.account(), p.account()
	rc := newHookReceiver(t)
	ep := cliJSON(t, p, a, "create", rc.URL+"/a", "--policy", `{"allowHttp":true}`)["id"].(string)
	var pub map[string]any
	p.do("POST", "/api/v1/events", a.APIToken, map[string]any{"id": "evt-a", "type": "x", "data": 1}, &pub)
	did := firstDelivery(t, pub)
	awaitDelivery(t, p, a, ep, did, "SUCCEEDED")
	for _, r := range [][2]string{
		{"GET", "/api/v1/webhooks/" + ep}, {"GET", "/api/v1/webhooks/" + ep + "/deliveries"},
		{"GET", "/api/v1/webhooks/" + ep + "/deliveries/" + did}, {"POST", "/api/v1/webhooks/" + ep + "/deliveries/" + did + "/retry"},
		{"POST", "/api/v1/webhooks/" + ep + "/ping"}, {"GET", "/api/v1/events/evt-a"},
	} {
		if code, raw := p.do(r[0], r[1], b.APIToken, nil, nil); code != http.StatusNotFound || !bytes.Contains(raw, []byte(`"status":404`)) {
			t.Errorf("B %s %s: %d %s", r[0], r[1], code, raw)
		}
	}
	if code, _ := p.do("POST", "/api/v1/events", b.APIToken, map[string]any{"type": "x", "data": 1, "endpointId": ep}, nil); code != http.StatusNotFound {
		t.Errorf("B publishing into A's endpoint: %d", code)
	}
	if code, out, _ := webhooksCLI(t, p, b, "list"); code != 0 || strings.Contains(out, ep) {
		t.Errorf("B lists A's endpoint: %s", out)
	}
	if code, out, _ := webhooksCLI(t, p, b, "show", ep); code != 1 {
		t.Errorf("B shows A's endpoint: %d %s", code, out)
	}
	if n := len(rc.requests("/a")); n != 1 {
		t.Fatalf("A's receiver got %d requests", n)
	}
	for body, field := range map[string]string{
		`{"url": "https://hooks.example.com/x", "policy": {"retries": 3}}`: "body.policy.retries",
		`{"url": "https://hooks.example.com/x", "profile": "fastest"}`:     "body.profile",
		`{"url": "https://hooks.example.com/x", "colour": "red"}`:          "body.colour",
		`{"url": "https://169.254.169.254/latest"}`:                        "body.url",
		`{"url": "ftp://hooks.example.com/"}`:                              "body.url",
	} {
		code, raw := p.do("POST", "/api/v1/webhooks", b.APIToken, json.RawMessage(body), nil)
		if code < 400 || code > 422 || !bytes.Contains(raw, []byte(field)) || !bytes.Contains(raw, []byte(`"title"`)) {
			t.Errorf("%s: %d %s, want a problem naming %s", body, code, raw, field)
		}
	}
	if code, out, _ := webhooksCLI(t, p, b, "list", "--json"); code != 0 || !strings.Contains(out, `"data":[]`) {
		t.Fatalf("bad input created endpoints: %s", out)
	}
}
