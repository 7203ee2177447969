package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// exampleOrigin serves the example apps as `demo --serve` does (/call, /gather,
// /status; /ws) on one loopback port, and counts the requests they get.
func exampleOrigin(t *testing.T) (origin string, requests *atomic.Int64) {
	t.Helper()
	noLeaks(t)
	requests = new(atomic.Int64)
	mux := http.NewServeMux()
	mux.Handle("/ws", &exampleapp.WSApp{})
	mux.Handle("/", &exampleapp.HTTPApp{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL, requests
}

// examplesDir is the repository's examples/scenarios.
var examplesDir = filepath.Join("..", "..", "examples", "scenarios")

// writeScenarios writes name → YAML into a new directory.
func writeScenarios(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The examples pass against the example apps, moved there by an --app origin (and
// --no-start: the folder would start its own on port 3000): one
// "ok" line per scenario in file order, then the summary.
func TestTestExamplesPass(t *testing.T) {
	origin, _ := exampleOrigin(t)
	code, stdout, stderr := runCLI(t, nil, "test", "--no-start", "--parallel", "3", "--app", origin, examplesDir)
	wantExit(t, code, exitOK, stdout, stderr)
	entries, _ := os.ReadDir(examplesDir)
	var names, lines []string
	for _, e := range entries {
		if e.Name() != apptest.FolderConfigName && !strings.HasSuffix(e.Name(), apptest.SnapshotSuffix) {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "ok" && strings.HasSuffix(f[2], "s") {
			lines = append(lines, f[1])
		}
	}
	if len(names) < 5 || !slices.Equal(lines, names) || !strings.Contains(stdout, "PASS: "+strconv.Itoa(len(names))+" scenario(s) in ") {
		t.Fatalf("want one ok line per example in file order %v, got:\n%s", names, stdout)
	}
}

// A scenario broken on purpose fails with the first unmet expectation named, and the
// timeline lines around the one it concerns; the JUnit report says the same, read
// back with encoding/xml; exit 1.
func TestTestFailureReportAndJUnit(t *testing.T) {
	origin, _ := exampleOrigin(t)
	dir := writeScenarios(t, map[string]string{
		"a-good.yaml": "app: " + origin + "/call\ncaller:\n  gathers:\n    - digits: \"1\"\n",
		"b-broken.yaml": "app: " + origin + "/call\ncaller:\n  gathers:\n    - digits: \"1\"\nexpect:\n  received:\n    - hook: /gather\n      payload:\n        digits: \"2\"\n" +
			"  max_answer_time: 1ns\n",
	})
	report := filepath.Join(t.TempDir(), "report.xml")
	code, stdout, _ := runCLI(t, nil, "test", "--junit", report, dir)
	const want = `received[0]: the 1st /gather: payload digits is "1", want "2"`
	if code != exitFailure || !strings.Contains(stdout, "ok    a-good") || !strings.Contains(stdout, "FAIL  b-broken") ||
		!strings.Contains(stdout, "      "+want+"\n") || !strings.Contains(stdout, "(and 1 more: max_answer_time)") ||
		!strings.Contains(stdout, ">") || !strings.Contains(stdout, "hook.attempt  http "+origin+"/gather") ||
		!strings.Contains(stdout, "FAIL: 1 of 2 scenario(s) failed, 1 passed") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				File    string `xml:"file,attr"`
				Time    string `xml:"time,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the JUnit report does not parse: %v\n%s", err, raw)
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Tests != 2 || doc.Suites[0].Failures != 1 || len(doc.Suites[0].Cases) != 2 {
		t.Fatalf("report %+v", doc)
	}
	good, bad := doc.Suites[0].Cases[0], doc.Suites[0].Cases[1]
	if good.Name != "a-good" || good.Failure != nil || !strings.Contains(good.SystemOut, "call.end") || good.Time == "" {
		t.Errorf("passing case %+v", good)
	}
	if bad.Name != "b-broken" || bad.Failure == nil || bad.Failure.Message != want || bad.Failure.Type != "received[0]" ||
		!strings.Contains(bad.Failure.Text, "caller.input") || !strings.HasSuffix(bad.File, "b-broken.yaml") {
		t.Errorf("failing case %+v", bad)
	}
}

// --json prints one event per line: run, then pass or fail (a failure's expectations
// and its whole timeline), and a summary last.
func TestTestJSON(t *testing.T) {
	origin, _ := exampleOrigin(t)
	dir := writeScenarios(t, map[string]string{
		"ok.yaml":   "app: ws" + strings.TrimPrefix(origin, "http") + "/ws#rc=2&rp=ct\n",
		"fail.yaml": "app: " + origin + "/call\nexpect:\n  verbs: [hangup]\n",
	})
	code, stdout, _ := runCLI(t, nil, "test", "--json", dir)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	events := map[string][]map[string]any{}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q", i+1, l)
		}
		events[m["action"].(string)] = append(events[m["action"].(string)], m)
	}
	if code != exitFailure || len(events["run"]) != 2 || len(events["pass"]) != 1 || len(events["fail"]) != 1 || len(events["summary"]) != 1 ||
		!strings.Contains(lines[len(lines)-1], `"action":"summary"`) {
		t.Fatalf("exit %d, events:\n%s", code, stdout)
	}
	run := events["run"][0]
	for _, k := range []string{"scenario", "file", "app"} {
		if run[k] == nil {
			t.Errorf("run event lacks %s: %v", k, run)
		}
	}
	// The app's retry fragment reads as written, not #rc=2\u0026rp=ct.
	if !strings.Contains(stdout, `/ws#rc=2&rp=ct"`) {
		t.Errorf("the app's fragment is escaped:\n%s", stdout)
	}
	pass, fail, sum := events["pass"][0], events["fail"][0], events["summary"][0]
	if pass["scenario"] != "ok" || pass["status"] != "completed" || pass["call_sid"] == "" || pass["timeline"] != nil || len(pass["failures"].([]any)) != 0 {
		t.Errorf("pass event %v", pass)
	}
	f0 := fail["failures"].([]any)[0].(map[string]any)
	tl, _ := fail["timeline"].([]any)
	if fail["scenario"] != "fail" || f0["expectation"] != "verbs" || !strings.HasPrefix(f0["message"].(string), "verbs: got [say") ||
		len(tl) == 0 || f0["event"].(float64) >= float64(len(tl)) || tl[int(f0["event"].(float64))].(map[string]any)["kind"] != "verb.start" {
		t.Errorf("fail event %v", fail)
	}
	if sum["scenarios"] != float64(2) || sum["passed"] != float64(1) || sum["failed"] != float64(1) || sum["skipped"] != float64(0) || sum["elapsed_ms"] == nil {
		t.Errorf("summary %v", sum)
	}
}

// Bad scenario files exit 2, each problem named by file and line, and nothing runs:
// the app gets no request, not even for the good file beside them.
func TestTestBadFilesRunNothing(t *testing.T) {
	origin, requests := exampleOrigin(t)
	dir := writeScenarios(t, map[string]string{
		"good.yaml":    "app: " + origin + "/call\n",
		"unknown.yaml": "app: " + origin + "/call\nexpect:\n  verbs: [say]\n  colour: red\n",
		"type.yaml":    "app: " + origin + "/call\ncaller:\n  gathers: 3\n",
		"url.yaml":     "from: \"+1555\"\napp: htp:/nowhere\n",
		"noapp.yaml":   "caller: {}\n",
	})
	code, stdout, stderr := runCLI(t, nil, "test", dir)
	if code != exitUsage || stdout != "" || requests.Load() != 0 {
		t.Fatalf("exit %d, %d requests, stdout %q", code, requests.Load(), stdout)
	}
	for _, want := range []string{"4 bad scenario file(s), nothing was run", filepath.Join(dir, "unknown.yaml") + `:4: [4:3] unknown field "colour"`,
		filepath.Join(dir, "type.yaml") + ":3: ", filepath.Join(dir, "url.yaml") + `:2: app: invalid application URL`,
		filepath.Join(dir, "noapp.yaml") + ": no app:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// Usage: --run selects by name (nothing matching is an error), --app replaces every
// app when it has a path, bad flags and missing directories exit 2.
func TestTestSelectionAndUsage(t *testing.T) {
	origin, _ := exampleOrigin(t)
	dir := writeScenarios(t, map[string]string{
		"ws-one.yaml":   "app: ws://127.0.0.1:1/ws\n",
		"http-one.yaml": "app: http://127.0.0.1:1/call\n",
		"http-two.yaml": "app: http://127.0.0.1:1/call\n",
	})
	code, stdout, _ := runCLI(t, nil, "test", "--run", "^http-", "--app", origin+"/call", dir)
	if code != exitOK || !strings.Contains(stdout, "ok    http-one") || !strings.Contains(stdout, "ok    http-two") || strings.Contains(stdout, "ws-one") {
		t.Fatalf("--run, --app: exit %d\n%s", code, stdout)
	}
	// Without --app they point at a closed port: the scenario is an error that
	// says why first.
	code, stdout, _ = runCLI(t, nil, "test", "--run", "http-one", dir)
	if code != exitFailure || !strings.Contains(stdout, "ERROR http-one  ") ||
		!strings.Contains(stdout, "\n      cannot reach the app at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused\n") {
		t.Fatalf("a failing call: exit %d\n%s", code, stdout)
	}
	other := writeScenarios(t, map[string]string{"ws-one.yaml": "app: ws://127.0.0.1:1/ws\n"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", "nothing", dir}, `no scenario matches --run "nothing"`},
		{[]string{"--run", "(", dir}, "--run"},
		{[]string{"--app", "ftp://x/", dir}, "--app"},
		{[]string{"--app", "http://u:hunter2@127.0.0.1:1/", dir}, "--app: a URL with user:password@"},
		{[]string{"--parallel", "0", dir}, "--parallel"},
		{[]string{"--username", "u", dir}, "--password"},
		{[]string{}, "no ./scenarios directory"},
		{[]string{filepath.Join(dir, "missing.yaml")}, "missing.yaml: no such scenario file or directory"},
		{[]string{t.TempDir()}, "no scenario files"},
		{[]string{dir, other}, `scenario name "ws-one"`},
		{[]string{"--junit", filepath.Join(dir, "no", "such", "dir.xml"), dir}, "--junit"},
	} {
		code, stdout, stderr := runCLI(t, nil, append([]string{"test"}, tc.args...)...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 naming %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// Once the run is interrupted no scenario starts: those left are reported as not run,
// in the text, the JUnit report and the exit status.
func TestTestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := writeScenarios(t, map[string]string{"a.yaml": "app: http://127.0.0.1:1/call\n", "b.yaml": "app: http://127.0.0.1:1/call\n"})
	report := filepath.Join(t.TempDir(), "r.xml")
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"test", "--parallel", "1", "--junit", report, dir}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	raw, _ := os.ReadFile(report)
	if code != exitFailure || !strings.Contains(errOut.String(), "interrupted") || !strings.Contains(string(raw), `skipped="2"`) ||
		strings.Count(out.String(), "SKIP  ") != 2 || !strings.Contains(out.String(), "2 not run") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nreport:\n%s", code, out.String(), errOut.String(), raw)
	}
}

// A folder's settings and a scenario's snapshots are read with the files, before
// anything runs: a bad one exits 2 naming the file and the line; flags that do not
// go together exit 2.
func TestTestBadSettingsRunNothing(t *testing.T) {
	origin, requests := exampleOrigin(t)
	for _, tc := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"a.yaml": "app: " + origin + "/call\n", "switchboard-test.yaml": "start: x\ncolour: red\n"}, `switchboard-test.yaml:2: [2:1] unknown field "colour"`},
		{map[string]string{"a.yaml": "app: " + origin + "/call\n", "switchboard-test.yaml": "start: ${NO_SUCH_VAR}\n"}, "switchboard-test.yaml:1: ${NO_SUCH_VAR}: NO_SUCH_VAR is not set"},
		{map[string]string{"a.yaml": "app: " + origin + "/call\n", "switchboard-test.yaml": "dir: src\n"}, "dir and start_timeout go with start:"},
		{map[string]string{"a.yaml": "app: " + origin + "/call\n", "a.snap.yaml": "a:\n  status: completed\n  colour: red\n"}, `a.snap.yaml:3: `},
		{map[string]string{"a.yaml": "app: " + origin + "/call\ncases:\n  - name: x\n  - name: x\n"}, `a.yaml:4: cases[1].name: "x" is also the name of cases[0]`},
	} {
		dir := writeScenarios(t, tc.files)
		code, stdout, stderr := runCLI(t, nil, "test", dir)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q, %q; want 2 naming %q", tc.files, code, stdout, stderr, tc.want)
		}
	}
	dir := writeScenarios(t, map[string]string{"a.yaml": "app: " + origin + "/call\n"})
	for _, args := range [][]string{{"--watch", "--list"}, {"--watch", "--junit", "r.xml"}, {"--start", "x", "--no-start"}, {"--start-timeout", "0s"}} {
		if code, _, stderr := runCLI(t, nil, append(append([]string{"test"}, args...), dir)...); code != exitUsage {
			t.Errorf("%v: exit %d, %q; want 2", args, code, stderr)
		}
	}
	if requests.Load() != 0 {
		t.Errorf("%d requests reached the app", requests.Load())
	}
}

// A malformed far-end script (an llm turn with two kinds, a tool call without a name,
// a dial's amd verdict) exits 2 naming its file and line, and nothing runs.
func TestTestBadFarEndScriptExits2(t *testing.T) {
	origin, requests := exampleOrigin(t)
	dir := writeScenarios(t, map[string]string{
		"turn.yaml": "app: " + origin + "/call\ncaller:\n  llm:\n    - turns:\n        - agent: hi\n          user: there\n",
		"tool.yaml": "app: " + origin + "/call\ncaller:\n  llm:\n    - turns:\n        - tool_call: {args: {a: 1}}\n",
		"amd.yaml":  "app: " + origin + "/call\ncaller:\n  dials:\n    - amd: robot\n",
	})
	code, _, stderr := runCLI(t, nil, "test", dir)
	if code != exitUsage || requests.Load() != 0 {
		t.Fatalf("exit %d, %d requests", code, requests.Load())
	}
	for _, want := range []string{
		filepath.Join(dir, "turn.yaml") + ":5: caller.llm[0].turns[0]: give one of agent, user, tool_call or event",
		filepath.Join(dir, "tool.yaml") + ":5: caller.llm[0].turns[0].tool_call: a tool call needs a name",
		filepath.Join(dir, "amd.yaml") + `:4: caller.dials[0].amd: "robot"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
