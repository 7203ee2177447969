package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// The tests of `switchboard test` as a developer runs it (docs/testing.md): the real
// binary against apps on loopback, each item of issue 30 through it.

// scenarioApp serves the example apps (/call, /gather, /status; /ws) as demo --serve
// does, and what a test changes of them: with flaky set, every 4th call hook answers
// a lone hangup; with changed set, the call hook answers a different menu.
type scenarioApp struct {
	origin  string
	calls   atomic.Int64 // call hooks answered
	flaky   atomic.Bool
	changed atomic.Bool
}

func newScenarioApp(t *testing.T) *scenarioApp {
	t.Helper()
	a := &scenarioApp{}
	mux := http.NewServeMux()
	mux.Handle("/ws", &exampleapp.WSApp{})
	mux.Handle("/", &exampleapp.HTTPApp{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/call" {
			n := a.calls.Add(1)
			switch {
			case a.flaky.Load() && n%4 == 0:
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `[{"verb":"hangup"}]`)
				return
			case a.changed.Load():
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `[{"verb":"say","text":"We are closed."},{"verb":"hangup"}]`)
				return
			}
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	a.origin = srv.URL
	return a
}

// files writes name → text into a new directory.
func files(t *testing.T, m map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range m {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// sbTest runs `switchboard test args...` in dir with env added to the clean one.
func sbTest(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, switchboardBin, append([]string{"test"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		code = exitErr.ExitCode()
	default:
		t.Fatalf("switchboard test %v: %v\n%s", args, err, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// jsonEvents decodes the lines of --json output.
func jsonEvents(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		events = append(events, m)
	}
	return events
}

func eventsOf(events []map[string]any, action string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["action"] == action {
			out = append(out, e)
		}
	}
	return out
}

// A suite with a passing file, a failing one, a skipped one and a file of two cases:
// --list names them without calling anything, -v prints every step, --fail-fast
// stops at the failure, --count runs each N times; exit statuses 0, 1 and 2.
func TestAppTestRunnerFlags(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{
		"a-pass.yaml": "app: ${APP}/call\ncaller:\n  gathers: [{digits: \"1\"}]\nexpect:\n  verbs: [say, gather, say, pause, say, hangup]\n",
		"b-fail.yaml": "app: ${APP}/call\nexpect:\n  verbs: [hangup]\n",
		"c-skip.yaml": "skip: the transfer desk is not built yet\napp: ${APP}/call\n",
		"d-menu.yaml": "app: ${APP}/call\nexpect:\n  hooks: [/call, /gather]\ncases:\n  - name: sales\n    caller: {gathers: [{digits: \"1\"}]}\n" +
			"  - name: support\n    caller: {gathers: [{speech: support please}]}\n",
	})
	env := []string{"APP=" + app.origin}
	code, stdout, stderr := sbTest(t, dir, env, "--list", ".")
	if code != 0 || stdout != "a-pass\nb-fail\nc-skip\nd-menu/sales\nd-menu/support\n" || app.calls.Load() != 0 {
		t.Fatalf("--list: exit %d, %d calls\n%s%s", code, app.calls.Load(), stdout, stderr)
	}
	code, stdout, _ = sbTest(t, dir, env, "-v", "--run", "^a-pass$", ".")
	if code != 0 || !strings.HasPrefix(stdout, "=== RUN   a-pass\n") || !strings.Contains(stdout, "call.start") ||
		!strings.Contains(stdout, "caller.input  the caller keys 1") || !strings.Contains(stdout, "\nok    a-pass  ") {
		t.Fatalf("-v: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = sbTest(t, dir, env, "--parallel", "1", ".")
	for _, want := range []string{"ok    a-pass ", "FAIL  b-fail ", "      verbs: got [say gather", "SKIP  c-skip          (the transfer desk is not built yet)",
		"ok    d-menu/sales ", "ok    d-menu/support ", "FAIL: 1 of 5 scenario(s) failed, 3 passed, 1 skipped, in "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the whole suite: no %q in\n%s", want, stdout)
		}
	}
	if code != 1 {
		t.Errorf("the whole suite: exit %d", code)
	}
	code, stdout, _ = sbTest(t, dir, env, "--parallel", "1", "--fail-fast", ".")
	if code != 1 || !strings.Contains(stdout, "FAIL  b-fail ") || !strings.Contains(stdout, "SKIP  d-menu/sales    (not run: --fail-fast)\n") ||
		!strings.Contains(stdout, "2 not run") {
		t.Fatalf("--fail-fast: exit %d\n%s", code, stdout)
	}
	before := app.calls.Load()
	code, stdout, _ = sbTest(t, dir, env, "--count", "3", "--json", "--run", "^(a-pass|d-menu/.*)$", ".")
	events := jsonEvents(t, stdout)
	passes := eventsOf(events, "pass")
	if code != 0 || len(eventsOf(events, "run")) != 9 || len(passes) != 3 || app.calls.Load()-before != 9 ||
		passes[0]["runs"] != 3.0 || passes[0]["passed_runs"] != 3.0 || passes[0]["pass_rate"] != 1.0 {
		t.Fatalf("--count 3: exit %d, %d calls\n%s", code, app.calls.Load()-before, stdout)
	}
	for _, args := range [][]string{{"--count", "0", "."}, {"--pass-rate", "0.9", "."}, {"--count", "2", "--pass-rate", "1.5", "."}, {"--run", "(", "."}} {
		if code, stdout, stderr := sbTest(t, dir, env, args...); code != 2 || stdout != "" || stderr == "" {
			t.Errorf("%v: exit %d, %q, %q; want 2", args, code, stdout, stderr)
		}
	}
}

// ${VAR} and ${VAR:-default} are read in every string, the cases' too; a variable
// not set is a bad file (exit 2, its line named) and nothing runs.
func TestAppTestEnvironment(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{"menu.yaml": `app: ${APP}${CALL_PATH:-/call}
from: "${CALLER:-+15550001111}"
cases:
  - name: keyed
    caller: {gathers: [{digits: "${DIGIT}"}]}
    expect:
      received:
        - hook: /call
          payload: {from: "+15550001111"}
        - hook: /gather
          payload: {digits: "${DIGIT}"}
`})
	code, stdout, stderr := sbTest(t, dir, []string{"APP=" + app.origin, "DIGIT=2"}, ".")
	if code != 0 || !strings.Contains(stdout, "ok    menu/keyed ") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = sbTest(t, dir, []string{"APP=" + app.origin}, ".")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "menu.yaml:5: ${DIGIT}: DIGIT is not set (give a default: ${DIGIT:-value})") {
		t.Fatalf("DIGIT unset: exit %d\n%s%s", code, stdout, stderr)
	}
}

// An app that answers differently run to run: --count 8 --pass-rate R passes when R
// of the runs pass, and text, JSON and JUnit carry the rate and the failing runs.
func TestAppTestPassRate(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	app.flaky.Store(true) // every 4th call fails: 6 of 8 pass
	dir := files(t, map[string]string{"agent.yaml": "app: " + app.origin + "/call\nexpect:\n  verbs: [say, gather, say, hangup]\n"})
	report := filepath.Join(t.TempDir(), "r.xml")
	code, stdout, _ := sbTest(t, dir, nil, "--count", "8", "--pass-rate", "0.75", "--junit", report, ".")
	if code != 0 || !strings.Contains(stdout, "ok    agent  ") || !strings.Contains(stdout, "(6/8 runs passed, need 6; failed: run ") {
		t.Fatalf("0.75: exit %d\n%s", code, stdout)
	}
	raw, _ := os.ReadFile(report)
	var doc struct {
		Suites []struct {
			Cases []struct {
				Properties []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, p := range doc.Suites[0].Cases[0].Properties {
		props[p.Name] = p.Value
	}
	if props["runs"] != "8" || props["passed_runs"] != "6" || props["pass_rate"] != "0.75" || props["required_pass_rate"] != "0.75" ||
		len(strings.Split(props["failing_runs"], ",")) != 2 || doc.Suites[0].Cases[0].Failure != nil {
		t.Fatalf("properties %v\n%s", props, raw)
	}
	code, stdout, _ = sbTest(t, dir, nil, "--count", "8", "--pass-rate", "0.8", "--json", ".")
	fail := eventsOf(jsonEvents(t, stdout), "fail")
	if code != 1 || len(fail) != 1 || fail[0]["passed_runs"] != 6.0 || fail[0]["required_pass_rate"] != 0.8 || len(fail[0]["failing_runs"].([]any)) != 2 {
		t.Fatalf("0.8: exit %d\n%s", code, stdout)
	}
	run := fail[0]["failing_runs"].([]any)[0].(map[string]any)
	if run["status"] == "" || !strings.HasPrefix(run["failures"].([]any)[0].(map[string]any)["message"].(string), "verbs: got [hangup]") {
		t.Fatalf("a failing run %v", run)
	}
}

// An app that cannot be reached is an error, said first, in text and JUnit; the
// calls' logs go to --log-file, never to the report or stderr.
func TestAppTestUnreachableAppIsAnError(t *testing.T) {
	t.Parallel()
	dir := files(t, map[string]string{"down.yaml": "app: http://127.0.0.1:1/call\nexpect:\n  verbs: [say]\n"})
	report, logFile := filepath.Join(t.TempDir(), "r.xml"), filepath.Join(t.TempDir(), "calls.log")
	code, stdout, stderr := sbTest(t, dir, nil, "--junit", report, "--log-file", logFile, ".")
	lines := strings.Split(stdout, "\n")
	if code != 1 || !strings.HasPrefix(lines[0], "ERROR down  ") ||
		lines[1] != "      cannot reach the app at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused" ||
		strings.Contains(stdout, "verbs: got") || strings.Contains(stderr, "{") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(report)
	var doc struct {
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Cases []struct {
				Error *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"error"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Suites[0].Cases[0]
	if doc.Errors != 1 || c.Failure != nil || c.Error == nil || c.Error.Type != "unreachable" || !strings.HasPrefix(c.Error.Message, "cannot reach the app at 127.0.0.1:1") {
		t.Fatalf("JUnit:\n%s", raw)
	}
	logs, _ := os.ReadFile(logFile)
	if !strings.Contains(string(logs), `"scenario":"down"`) || !strings.Contains(string(logs), "connection refused") {
		t.Fatalf("log file:\n%s", logs)
	}
}

// --update records each call as its snapshot; the same app then passes; a changed
// app fails with a diff of what changed, exit 1.
func TestAppTestSnapshots(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{"menu.yaml": "app: " + app.origin + "/call\nsnapshot:\n  payload: [digits, call_sid]\n" +
		"cases:\n  - name: sales\n    caller: {gathers: [{digits: \"1\"}]}\n  - name: silent\n    caller: {gathers: [{timeout: true}]}\n"})
	code, stdout, _ := sbTest(t, dir, nil, ".")
	if code != 1 || !strings.Contains(stdout, "snapshot: menu.snap.yaml has no snapshot of menu/sales yet: record one with --update") {
		t.Fatalf("before --update: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = sbTest(t, dir, nil, "--update", ".")
	snap, _ := os.ReadFile(filepath.Join(dir, "menu.snap.yaml"))
	if code != 0 || !strings.Contains(stdout, "wrote menu.snap.yaml") || !strings.Contains(string(snap), "menu/sales:\n  status: completed\n") ||
		!strings.Contains(string(snap), "        call_sid: <id>\n        digits: \"1\"\n") || !strings.Contains(string(snap), "menu/silent:") {
		t.Fatalf("--update: exit %d\n%s\n%s", code, stdout, snap)
	}
	if code, stdout, _ = sbTest(t, dir, nil, "."); code != 0 {
		t.Fatalf("the same app: exit %d\n%s", code, stdout)
	}
	// --update of calls that did what their snapshots say leaves the file alone.
	if code, stdout, _ = sbTest(t, dir, nil, "--update", "."); code != 0 || strings.Contains(stdout, "wrote") ||
		!strings.Contains(stdout, "\n1 snapshot file(s) unchanged\n") {
		t.Fatalf("--update again: exit %d\n%s", code, stdout)
	}
	app.changed.Store(true)
	code, stdout, _ = sbTest(t, dir, nil, ".")
	for _, want := range []string{"FAIL  menu/sales ", "      snapshot: the call differs from its snapshot in menu.snap.yaml (- snapshot, + this call; --update records this one)",
		// numbered with the snapshot file's lines: menu/sales's reason: is its line 5
		"      --- menu.snap.yaml\n      +++ this call\n      @@ -5,21 +5,11 @@ verbs:\n", "\n       verbs:\n         - say\n      -  - gather\n",
		"\n      -      digits: \"1\"\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("a changed app: no %q in\n%s", want, stdout)
		}
	}
	if code != 1 {
		t.Errorf("a changed app: exit %d", code)
	}
}

// sbSimulate runs `switchboard simulate args...` in dir with env added to the clean
// one.
func sbSimulate(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, switchboardBin, append([]string{"simulate"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		code = exitErr.ExitCode()
	default:
		t.Fatalf("switchboard simulate %v: %v\n%s", args, err, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// `simulate --scenario` plays a file of `switchboard test` as test reads it: its
// ${VAR} references, its folder's app:, the case --case names; a file of several
// cases without --case is bad usage naming them.
func TestSimulateReadsTestScenarioFiles(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{
		"tests/switchboard-test.yaml": "app: ${APP}/call\n",
		"tests/menu.yaml": `expect:
  verbs: [say, gather, say, pause, say, hangup]
cases:
  - name: sales
    caller: {gathers: [{digits: "${DIGIT:-1}"}]}
    expect:
      received: [{hook: /gather, payload: {digits: "${DIGIT:-1}"}}]
  - name: no-input
    caller: {gathers: [{timeout: true}]}
    expect: {verbs: [say, gather, say, hangup]}
`})
	env := []string{"APP=" + app.origin}
	code, stdout, stderr := sbSimulate(t, dir, env, "--scenario", "tests/menu.yaml", "--case", "sales")
	if code != 0 || !strings.Contains(stdout, "caller.input  the caller keys 1") || !strings.Contains(stdout, app.origin+"/gather") {
		t.Fatalf("--case sales: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = sbSimulate(t, dir, env, "--scenario", "tests/menu.yaml", "--case", "no-input")
	if code != 0 || strings.Contains(stdout, "the caller keys") {
		t.Fatalf("--case no-input: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = sbSimulate(t, dir, env, "--scenario", "tests/menu.yaml")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "tests/menu.yaml: has 2 cases (sales, no-input): choose one with --case NAME") {
		t.Fatalf("no --case: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = sbSimulate(t, dir, nil, "--scenario", "tests/menu.yaml", "--case", "sales")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "tests/switchboard-test.yaml:1: ${APP}: APP is not set") {
		t.Fatalf("APP unset: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// A snapshot records the call's compat warnings by rule (docs/testing.md §4): an
// app whose gather no rule ends loses the caller's digits as jambonz would, and
// the snapshot says so; the app mended (numDigits), the snapshot differs there.
// The report tells each warning the scenario's expect.compat does not name, under
// its verdict and in its JSON event, and counts them in the summary.
func TestAppTestCompatWarningsInReportsAndSnapshots(t *testing.T) {
	t.Parallel()
	var mended atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/call":
			gather := `{"verb":"gather","input":["digits"],"actionHook":"/gather","timeout":5}`
			if mended.Load() {
				gather = `{"verb":"gather","input":["digits"],"actionHook":"/gather","timeout":5,"numDigits":2}`
			}
			io.WriteString(w, "["+gather+`,{"verb":"hangup"}]`)
		default:
			io.WriteString(w, `[{"verb":"hangup"}]`)
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	dir := files(t, map[string]string{
		"menu.yaml":  "app: " + srv.URL + "/call\ncaller:\n  gathers: [{digits: \"12\"}]\n",
		"named.yaml": "app: " + srv.URL + "/call\ncaller:\n  gathers: [{digits: \"12\"}]\nexpect:\n  compat: [gather-digits-lost]\n",
	})
	code, stdout, _ := sbTest(t, dir, nil, "--update", "--run", "^menu$", ".")
	snap, _ := os.ReadFile(filepath.Join(dir, "menu.snap.yaml"))
	if code != 0 || !strings.HasSuffix(string(snap), "\n  compat:\n    - gather-digits-lost\n") || strings.Contains(string(snap), "127.0.0.1") {
		t.Fatalf("--update: exit %d\n%s\n%s", code, stdout, snap)
	}
	if !strings.Contains(stdout, "\n      compat gather-digits-lost: the caller keyed 12 but the gather") ||
		!strings.Contains(stdout, "\n1 scenario(s) with compat warnings: jambonz would do what they say;") {
		t.Fatalf("the report tells no compat warning:\n%s", stdout)
	}
	// A scenario that names the rule relies on it: nothing is told.
	code, stdout, _ = sbTest(t, dir, nil, "--run", "^named$", ".")
	if code != 0 || strings.Contains(stdout, "compat") {
		t.Fatalf("named: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = sbTest(t, dir, nil, "--json", "--run", "^menu$", ".")
	pass := eventsOf(jsonEvents(t, stdout), "pass")
	if code != 0 || len(pass) != 1 || pass[0]["compat"] == nil || pass[0]["compat"].([]any)[0].(map[string]any)["rule"] != "gather-digits-lost" {
		t.Fatalf("--json: exit %d\n%s", code, stdout)
	}
	mended.Store(true)
	code, stdout, _ = sbTest(t, dir, nil, "--run", "^menu$", ".")
	if code != 1 || !strings.Contains(stdout, " @@ compat:\n") || !strings.Contains(stdout, "\n      -compat:\n      -  - gather-digits-lost\n") {
		t.Fatalf("mended: exit %d\n%s", code, stdout)
	}
}
