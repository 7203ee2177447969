package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// traceparentApp is an HTTP application that answers every hook with verbs and keeps
// the traceparent of each request.
type traceparentApp struct {
	mu   sync.Mutex
	seen []string
}

func (a *traceparentApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("traceparent"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `[{"verb":"say","text":"hi"},{"verb":"hangup"}]`)
}

func (a *traceparentApp) traceparents() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// spanIDs splits a traceparent into its trace and span ids.
func spanIDs(t *testing.T, traceparent string) (trace, span string) {
	t.Helper()
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || parts[0] != "00" || len(parts[1]) != 32 || len(parts[2]) != 16 {
		t.Fatalf("traceparent %q is not W3C Trace Context", traceparent)
	}
	return parts[1], parts[2]
}

func findSpan(spans []testkit.OTLPSpan, match func(testkit.OTLPSpan) bool) (testkit.OTLPSpan, bool) {
	for _, s := range spans {
		if match(s) {
			return s, true
		}
	}
	return testkit.OTLPSpan{}, false
}

// TestServeTracesToOTLP runs `switchboard serve` with the standard OTLP variables
// pointing at a receiver in the test that decodes what arrives (docs/outbox.md §8):
// a publish through the API, under the caller's traceparent, is a server span, its
// publish span and a span per delivery attempt in the caller's trace, and the
// webhook carries the attempt's traceparent; a call started through the API is a
// span whose hook attempts are its children, and the application gets each
// attempt's traceparent. Exports carry the configured headers and the node's
// service name; a node without the variables sends no traceparent at all.
func TestServeTracesToOTLP(t *testing.T) {
	otlp := testkit.NewOTLPReceiver(t)
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=x-api-key=k%20123",
		"OTEL_SERVICE_NAME=sb-test",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci",
		"OTEL_BSP_SCHEDULE_DELAY=100") // the SDK's batch delay: exports within a tenth of a second
	a := p.account()
	rc := newHookReceiver(t)
	var ep map[string]any
	if code, raw := p.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": rc.URL + "/hook", "policy": map[string]any{"allowHttp": true}}, &ep); code != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", code, raw)
	}

	// The caller's own trace: the API's span continues it.
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var pub map[string]any
	resp, raw := testkit.DoJSON(t, "POST", p.base+"/api/v1/events", a.APIToken, map[string]any{"type": "invoice.paid", "data": map[string]any{"n": 1}},
		http.Header{"Traceparent": {"00-" + callerTrace + "-" + callerSpan + "-01"}}, &pub)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("publish: %d %s", resp.StatusCode, raw)
	}
	awaitDelivery(t, p, a, ep["id"].(string), firstDelivery(t, pub), "SUCCEEDED")
	webhookTrace, webhookSpan := spanIDs(t, rc.requests("/hook")[0].header.Get("traceparent"))
	if webhookTrace != callerTrace {
		t.Fatalf("the webhook's trace %s, want the caller's %s", webhookTrace, callerTrace)
	}

	app := &traceparentApp{}
	appSrv := httptest.NewServer(app)
	t.Cleanup(appSrv.Close)
	sid := p.startCallTo(a, appSrv.URL+"/call")
	if c := p.waitCall(a, sid); c.CallStatus != "completed" {
		t.Fatalf("call ended %s (%s)", c.CallStatus, c.Reason)
	}
	hookTrace, hookSpan := spanIDs(t, app.traceparents()[0])

	spans := otlp.WaitFor(30*time.Second, "the publish's, the webhook's, the call's and its hook's spans", func(spans []testkit.OTLPSpan) bool {
		_, webhook := findSpan(spans, func(s testkit.OTLPSpan) bool { return s.SpanID == webhookSpan })
		_, hook := findSpan(spans, func(s testkit.OTLPSpan) bool { return s.SpanID == hookSpan })
		_, call := findSpan(spans, func(s testkit.OTLPSpan) bool { return s.Name == "call" })
		return webhook && hook && call
	})
	byID := map[string]testkit.OTLPSpan{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	// webhook attempt → publish → API request → the caller's span.
	attempt := byID[webhookSpan]
	publish := byID[attempt.ParentSpanID]
	request := byID[publish.ParentSpanID]
	if attempt.Name != "webhook POST" || publish.Name != "publish invoice.paid" || request.Name != "POST /api/v1/events" ||
		request.ParentSpanID != callerSpan || request.TraceID != callerTrace {
		t.Fatalf("webhook's chain: %q ← %q ← %q (parent %s), want webhook POST ← publish invoice.paid ← POST /api/v1/events ← the caller's span",
			attempt.Name, publish.Name, request.Name, request.ParentSpanID)
	}
	if attempt.Attributes["http.response.status_code"] != "204" || attempt.Attributes["webhook.endpoint.id"] != ep["id"] ||
		request.Attributes["http.response.status_code"] != "201" {
		t.Fatalf("attributes: attempt %v, request %v", attempt.Attributes, request.Attributes)
	}
	// hook attempt → call → POST .../Calls.
	hook := byID[hookSpan]
	call := byID[hook.ParentSpanID]
	start := byID[call.ParentSpanID]
	if hook.Name != "hook POST" || call.Name != "call" || call.Attributes["call.sid"] != sid || call.Attributes["call.status"] != "completed" ||
		start.Name != "POST /v1/Accounts/{account}/Calls" || hook.TraceID != hookTrace {
		t.Fatalf("hook's chain: %q ← %q (%v) ← %q", hook.Name, call.Name, call.Attributes, start.Name)
	}
	if r := attempt.Resource; r["service.name"] != "sb-test" || r["deployment.environment"] != "ci" || r["service.instance.id"] == "" {
		t.Fatalf("resource %v", r)
	}
	if h := otlp.Headers()[0]; h.Get("X-Api-Key") != "k 123" {
		t.Fatalf("export headers %v: want x-api-key from OTEL_EXPORTER_OTLP_HEADERS, decoded", h)
	}

	// Off by default: no traceparent goes out.
	plain := startServe(t, filepath.Join(t.TempDir(), "plain.db"))
	b := plain.account()
	sid = plain.startCallTo(b, appSrv.URL+"/plain")
	plain.waitCall(b, sid)
	if tps := app.traceparents(); tps[len(tps)-1] != "" {
		t.Fatalf("a node without OTEL_* variables sent traceparent %q", tps[len(tps)-1])
	}
}

// TestServeRefusesBadTracingSettings: a bad OTEL_* value stops serve at start with a
// message naming the variable.
func TestServeRefusesBadTracingSettings(t *testing.T) {
	for _, tc := range []struct{ env, name string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT=ftp://collector", "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"OTEL_EXPORTER_OTLP_HEADERS=novalue", "OTEL_EXPORTER_OTLP_HEADERS"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=soon", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
	} {
		cmd := exec.Command(switchboardBin, "serve", "--print-config")
		cmd.Env = append(cleanEnv(), tc.env)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tc.name) {
			t.Errorf("%s: exit %d, output %q; want 2 naming %s", tc.env, code, out, tc.name)
		}
	}
}
