package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

func exampleServers(t *testing.T) (httpURL, wsURL string) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	h := httptest.NewServer(&exampleapp.HTTPApp{})
	w := httptest.NewServer(&exampleapp.WSApp{})
	t.Cleanup(func() {
		h.CloseClientConnections()
		h.Close()
		w.CloseClientConnections()
		w.Close()
	})
	return h.URL, "ws" + strings.TrimPrefix(w.URL, "http")
}

// jsonLines decodes every stdout line; the last must be the summary.
func jsonLines(t *testing.T, stdout string) (events []map[string]any, summary map[string]any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q", i+1, l)
		}
		if i == len(lines)-1 {
			return events, m
		}
		events = append(events, m)
	}
	return nil, nil
}

// The --json contract: keys of every kind, and the summary.
var kindKeys = map[string][]string{
	"call.start": {"from", "to", "direction"}, "hook.attempt": {"url", "transport", "attempt", "status", "class", "duration_ms"},
	"hook.retry": {"delay_ms"}, "ws.open": {}, "ws.close": {"code"}, "ws.reconnect": {"attempt"},
	"msg.sent": {"type", "msgid"}, "msg.recv": {"type", "msgid"}, "verb.start": {"verb"}, "verb.end": {"verb"},
	"call.status": {"status"}, "alert": {"type", "detail"}, "call.end": {"status", "reason", "sip_status"},
	"caller.input": {"input", "value"}, "fault": {"fault", "url", "attempt", "delay_ms", "jitter_ms"},
	"agent.spoke": {"source", "text"}, "compat": {"rule", "detail"},
}

// summaryKeys are the keys every --json summary line has.
var summaryKeys = []string{"calls", "completed", "failed", "alerts", "compat", "hook_latency_ms", "expectations_failed", "canceled", "wall_ms", "calls_per_second"}

// docs/cli.md's --json table has a row for every kind with each of its keys, and its
// summary line every key: a reader of the page found agent.spoke and compat lines in
// the output that the table did not name.
func TestCLIPageNamesEveryJSONKind(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	start, end := strings.Index(page, "### `--json` output"), strings.Index(page, "### Scenario files")
	if start < 0 || end < start {
		t.Fatal("docs/cli.md has no --json section before its scenario files")
	}
	section := page[start:end]
	rows := map[string]string{} // kind: its row
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, kind := range regexp.MustCompile("`([a-z.]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows[kind[1]] = line
		}
	}
	for kind, keys := range kindKeys {
		row, ok := rows[kind]
		if !ok {
			t.Errorf("docs/cli.md's --json table has no row for %s", kind)
			continue
		}
		for _, k := range keys {
			if !strings.Contains(row, "`"+k+"`") {
				t.Errorf("docs/cli.md's row of %s does not name %s", kind, k)
			}
		}
	}
	for _, k := range summaryKeys {
		if !strings.Contains(section, `"`+k+`":`) {
			t.Errorf("docs/cli.md's summary line has no %s", k)
		}
	}
}

func checkContract(t *testing.T, events []map[string]any, summary map[string]any) {
	t.Helper()
	for _, e := range events {
		keys, ok := kindKeys[e["kind"].(string)]
		if !ok {
			t.Fatalf("unknown kind in %v", e)
		}
		for _, k := range append([]string{"t_ms", "call_sid", "kind"}, keys...) {
			if _, ok := e[k]; !ok {
				t.Fatalf("%s lacks %q: %v", e["kind"], k, e)
			}
		}
		// The same spelling as fragment explain's transport.
		if tr, ok := e["transport"]; ok && tr != "http" && tr != "websocket" {
			t.Fatalf("transport %v: want http or websocket", tr)
		}
	}
	if summary["kind"] != "summary" {
		t.Fatalf("last line %v", summary)
	}
	for _, k := range summaryKeys {
		if _, ok := summary[k]; !ok {
			t.Fatalf("summary lacks %s", k)
		}
	}
	lat := summary["hook_latency_ms"].(map[string]any)
	for _, k := range []string{"p50", "p95", "p99"} {
		if _, ok := lat[k]; !ok {
			t.Fatalf("hook_latency_ms lacks %s", k)
		}
	}
}

func eventKinds(events []map[string]any) []string {
	var out []string
	for _, e := range events {
		out = append(out, e["kind"].(string))
	}
	return out
}

func TestSimulateJSONHTTP(t *testing.T) {
	httpURL, _ := exampleServers(t)
	code, stdout, stderr := runCLI(t, nil, "simulate", "--json", "--from", "+1999", httpURL+"/call",
		"--scenario", filepath.Join("..", "..", "examples", "ivr.yaml"))
	wantExit(t, code, exitOK, stdout, stderr)
	events, summary := jsonLines(t, stdout)
	checkContract(t, events, summary)
	if events[0]["kind"] != "call.start" || events[0]["from"] != "+1999" || events[0]["direction"] != "inbound" {
		t.Fatalf("first line %v", events[0])
	}
	if last := events[len(events)-1]; last["kind"] != "call.end" || last["status"] != "completed" || last["sip_status"] != float64(200) {
		t.Fatalf("last event %v", last)
	}
	if summary["calls"] != float64(1) || summary["completed"] != float64(1) || summary["expectations_failed"] != float64(0) {
		t.Fatalf("summary %v", summary)
	}
}

// --json prints a say's SSML and its "&" as they are, not \u003cspeak\u003e and
// \u0026 (json.Marshal's HTML escaping), in the timeline as in the summary.
func TestSimulateJSONUnescaped(t *testing.T) {
	noLeaks(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","text":"<speak>sales & support</speak>"},{"verb":"hangup"}]`))
	}))
	t.Cleanup(app.Close)
	sc := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(sc, []byte("expect:\n  verbs: [say, pause]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, nil, "simulate", "--json", "--scenario", sc, app.URL+"/call")
	wantExit(t, code, exitFailure, stdout, stderr)
	for _, want := range []string{`"text":"<speak>sales & support</speak>"`, `"failure":"verbs: got [say hangup], want [say pause]"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %s in\n%s", want, stdout)
		}
	}
}

func TestSimulateWSScenarioWithDrop(t *testing.T) {
	_, wsURL := exampleServers(t)
	code, stdout, stderr := runCLI(t, nil, "simulate", "--json", wsURL+"/ws#rc=3",
		"--scenario", filepath.Join("..", "..", "examples", "ws-reconnect.yaml"))
	wantExit(t, code, exitOK, stdout, stderr)
	events, summary := jsonLines(t, stdout)
	checkContract(t, events, summary)
	k := eventKinds(events)
	for _, want := range []string{"ws.open", "ws.close", "hook.retry", "ws.reconnect", "msg.sent", "msg.recv"} {
		if !slices.Contains(k, want) {
			t.Fatalf("no %s in %v", want, k)
		}
	}
	var sent []string
	for _, e := range events {
		if e["kind"] == "msg.sent" {
			sent = append(sent, e["type"].(string))
		}
	}
	if !slices.Contains(sent, "session:reconnect") {
		t.Fatalf("sent %v", sent)
	}
}

func TestSimulateManyCalls(t *testing.T) {
	_, wsURL := exampleServers(t)
	code, stdout, stderr := runCLI(t, nil, "simulate", "--calls", "6", "--concurrency", "3", wsURL+"/ws")
	wantExit(t, code, exitOK, stdout, stderr)
	if !strings.Contains(stdout, "6 call(s): 6 completed, 0 failed") || strings.Contains(stderr, "calls") {
		t.Fatalf("stdout %q stderr %q (no progress bar off a terminal)", stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, "simulate", "--json", "--calls", "4", "--concurrency", "2", wsURL+"/ws")
	events, summary := jsonLines(t, stdout)
	checkContract(t, events, summary)
	sids := map[any]bool{}
	for _, e := range events {
		sids[e["call_sid"]] = true
	}
	if code != exitOK || len(sids) != 4 || summary["calls"] != float64(4) {
		t.Fatalf("exit %d, %d call_sids, summary %v", code, len(sids), summary)
	}
}

func TestSimulateExit1(t *testing.T) {
	httpURL, _ := exampleServers(t)
	// The app is unreachable: the call is rejected.
	code, stdout, stderr := runCLI(t, nil, "simulate", "--json", "http://127.0.0.1:1/call")
	_, summary := jsonLines(t, stdout)
	if code != exitFailure || summary["failed"] != float64(1) || summary["alerts"] != float64(1) {
		t.Fatalf("exit %d summary %v", code, summary)
	}
	// The alert is logged at warn (the default level shows it), with a millisecond
	// timestamp.
	if !regexp.MustCompile(`"level":"warn".*"alert":"webhook-connection-failure"`).MatchString(stderr) ||
		!regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}`).MatchString(stderr) {
		t.Errorf("stderr %q, want the alert at warn with a millisecond timestamp", stderr)
	}
	// An expectation that does not hold.
	dir := t.TempDir()
	sc := filepath.Join(dir, "s.yaml")
	os.WriteFile(sc, []byte("expect:\n  verbs: [say, hangup]\n  hooks: [/nope]\n"), 0o600)
	code, stdout, _ = runCLI(t, nil, "simulate", "--json", "--scenario", sc, httpURL+"/call")
	_, summary = jsonLines(t, stdout)
	if code != exitFailure || summary["expectations_failed"] != float64(2) || summary["failed"] != float64(0) {
		t.Fatalf("exit %d summary %v", code, summary)
	}
	// The summary says which ones.
	if listed, _ := summary["expectation_failures"].([]any); len(listed) != 2 ||
		!strings.HasPrefix(listed[0].(map[string]any)["failure"].(string), "verbs: got") || listed[0].(map[string]any)["call_sid"] == "" {
		t.Fatalf("expectation_failures %v", summary["expectation_failures"])
	}
	// An app that hangs up before answering: the call's final status is failed, so
	// the run fails and the summary agrees with the call.end line.
	hangupOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"hangup"}]`))
	}))
	defer hangupOnly.Close()
	code, stdout, _ = runCLI(t, nil, "simulate", "--json", hangupOnly.URL)
	events, summary := jsonLines(t, stdout)
	last := events[len(events)-1]
	if code != exitFailure || last["status"] != "failed" || summary["failed"] != float64(1) || summary["completed"] != float64(0) {
		t.Fatalf("unanswered hangup: exit %d, call.end %v, summary %v", code, last, summary)
	}
	// A failure the scenario expects is success.
	os.WriteFile(sc, []byte("expect:\n  status: failed\n  alerts: [webhook-connection-failure]\n"), 0o600)
	if code, stdout, _ = runCLI(t, nil, "simulate", "--scenario", sc, "http://127.0.0.1:1/call"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	// A WebSocket call that loses its socket for good still ends completed (it was
	// answered), but it failed: expecting status completed does not excuse that;
	// expecting its reason does.
	_, wsURL := exampleServers(t)
	drop := "faults:\n  - after_message: 6\n    close_code: 1011\n"
	for _, tc := range []struct {
		expect string
		code   int
	}{{"expect:\n  status: completed\n", exitFailure}, {"expect:\n  reason: reconnect-failed\n", exitOK}} {
		os.WriteFile(sc, []byte(drop+tc.expect), 0o600)
		code, stdout, _ = runCLI(t, nil, "simulate", "--json", "--scenario", sc, wsURL+"/ws#rc=0")
		events, _ := jsonLines(t, stdout)
		if last := events[len(events)-1]; code != tc.code || last["reason"] != "reconnect-failed" {
			t.Fatalf("%q: exit %d, call.end %v", tc.expect, code, last)
		}
	}
}

func TestSimulateExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"ftp://x/call"}, nil, "APP_URL"},
		{[]string{}, nil, "arg"},
		{[]string{"http://u:hunter2@127.0.0.1:1/", "examples/ivr.yaml"}, nil, "simulate takes one APP_URL at most (got 2 arguments); a scenario file goes after --scenario"},
		{[]string{"--calls", "0", "http://127.0.0.1:1/"}, nil, "--calls"},
		{[]string{"--username", "u", "http://127.0.0.1:1/"}, nil, "--password"},
		{[]string{"http://u:hunter2@127.0.0.1:1/"}, nil, "--username and --password"},
		{[]string{"--status-hook", "http://u:hunter2@127.0.0.1:1/s", "http://127.0.0.1:1/"}, nil, "username and password"},
		{[]string{"http://127.0.0.1:1/"}, map[string]string{"JAMBONES_WS_MAX_PAYLOAD": "lots"}, "JAMBONES_WS_MAX_PAYLOAD"},
		{[]string{"--scenario", filepath.Join(dir, "missing.yaml"), "http://127.0.0.1:1/"}, nil, "missing.yaml"},
		{[]string{"--scenario", write("a.yaml", "caller:\n  gathers:\n    - digits: 1\n      colour: red\n"), "http://127.0.0.1:1/"}, nil, "a.yaml:4: [4:7] unknown field"},
		{[]string{"--scenario", write("b.yaml", "caller:\n  hangup_after: soon\n"), "http://127.0.0.1:1/"}, nil, "b.yaml:2: "},
		{[]string{"--scenario", write("c.yaml", "faults:\n  - after_message: 2\n  - after_message: 3\n    close_code: 99\n"), "http://127.0.0.1:1/"}, nil, "c.yaml:4: "},
		{[]string{"--scenario", write("d.yaml", "expect:\n  verbs: [say, shout]\n"), "http://127.0.0.1:1/"}, nil, "d.yaml:2: "},
		{[]string{"--scenario", write("e.yaml", "caller:\n  gathers:\n    - digits: \"1\"\n      speech: hi\n"), "http://127.0.0.1:1/"}, nil, "e.yaml:3: "},
		{[]string{"--scenario", write("f.yaml", "caller: [\n"), "http://127.0.0.1:1/"}, nil, "f.yaml:1: "},
		{[]string{"--scenario", write("g.yaml", "expect:\n  status: completed\n  reason: tired\n"), "http://127.0.0.1:1/"}, nil, "g.yaml:3: "},
	} {
		code, stdout, stderr := runCLI(t, tc.env, append([]string{"simulate"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" || strings.Contains(stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 naming %q", tc.args, code, stderr, stdout, tc.want)
		}
	}
}

func TestDemo(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	code, stdout, stderr := runCLI(t, nil, "demo")
	wantExit(t, code, exitOK, stdout, stderr)
	for _, want := range []string{"HTTP webhook app", "WebSocket app", "gather", "/gather", "session:reconnect", "ws.reconnect", "hangup", "✓ call completed",
		"Webhook outbox", "#1 500 http_5xx", "restart", "#2 500 http_5xx", "#3 204 success", "signature ✓", "✓ delivery SUCCEEDED after 3 attempts"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, stdout)
		}
	}
}
