package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// The summary has the run's wall time and its calls per second, as text and in the
// --json summary line (new keys beside the old ones).
func TestSimulateSummaryWallTimeAndRate(t *testing.T) {
	_, wsURL := exampleServers(t)
	code, stdout, stderr := runCLI(t, nil, "simulate", "--calls", "4", "--concurrency", "2", wsURL+"/ws")
	if code != exitOK || !strings.Contains(stdout, "4 call(s): 4 completed, 0 failed, 0 canceled") ||
		!strings.Contains(stdout, "s wall, ") || !strings.Contains(stdout, " calls/s") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, "simulate", "--json", "--calls", "4", "--concurrency", "2", wsURL+"/ws")
	events, summary := jsonLines(t, stdout)
	checkContract(t, events, summary)
	wall, rate := summary["wall_ms"].(float64), summary["calls_per_second"].(float64)
	if code != exitOK || wall < 0 || rate <= 0 || summary["canceled"] != float64(0) {
		t.Fatalf("summary %v", summary)
	}
}

// Under --concurrency the calls share a pool with room for all of them: the app sees
// connections reused, not one per hook (with the pool's default of 4 idle
// connections, 12 calls at once close and reopen them all the time).
func TestSimulateReusesConnections(t *testing.T) {
	noLeaks(t)
	var conns atomic.Int64
	app := httptest.NewUnstartedServer(&exampleapp.HTTPApp{})
	app.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	app.Start()
	t.Cleanup(app.Close)
	sc := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(sc, []byte("status_hook: /status\ncaller:\n  gathers:\n    - digits: \"1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const calls, concurrency = 256, 32
	code, stdout, stderr := runCLI(t, nil, "simulate", "--scenario", sc, "--calls", strconv.Itoa(calls), "--concurrency", strconv.Itoa(concurrency), app.URL+"/call")
	wantExit(t, code, exitOK, stdout, stderr)
	// Each call makes 4 requests (the call hook, the gather's hook, 2 status
	// notifications): 1024 in all. A connection is opened for a request that finds
	// none idle; at most one per call in flight, and as many again when one frees up
	// while another was being dialed.
	t.Logf("conns %d", conns.Load())
	if n := conns.Load(); n > 2*concurrency {
		t.Fatalf("the app saw %d connections for %d calls %d at a time: they are not reused", n, calls, concurrency)
	}
}

// noLeaks checks, once the test and its cleanups are done, that no goroutine it
// started is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// A call stopped by --timeout counts as canceled, not failed; the run still did not
// go as expected (exit 1).
func TestSimulateCanceledCall(t *testing.T) {
	noLeaks(t)
	release := make(chan struct{})
	var once sync.Once
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		once.Do(func() { close(release) })
		hang.Close()
	})
	code, stdout, _ := runCLI(t, nil, "simulate", "--json", "--timeout", "300ms", hang.URL+"/call")
	events, summary := jsonLines(t, stdout)
	last := events[len(events)-1]
	if code != exitFailure || last["reason"] != "canceled" || summary["canceled"] != float64(1) || summary["failed"] != float64(0) {
		t.Fatalf("exit %d, call.end %v, summary %v", code, last, summary)
	}
	code, stdout, _ = runCLI(t, nil, "simulate", "--timeout", "300ms", hang.URL+"/call")
	if code != exitFailure || !strings.Contains(stdout, "0 failed, 1 canceled") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
}

// A destination the egress rules refuse gets one short alert naming the variable that
// allows it; SWITCHBOARD_EGRESS_ALLOW then lets it through (0.0.0.0 is refused by
// default and reaches the loopback app when allowed); a bad value exits 2, naming it.
func TestSimulateEgressAllow(t *testing.T) {
	httpURL, _ := exampleServers(t)
	port := httpURL[strings.LastIndex(httpURL, ":"):]
	refused := "http://0.0.0.0" + port + "/call"
	code, stdout, _ := runCLI(t, nil, "simulate", refused)
	var alert string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "  alert  ") {
			alert = l
		}
	}
	if code != exitFailure || strings.Count(alert, refused) != 1 || !strings.Contains(alert, "SWITCHBOARD_EGRESS_ALLOW") || len(alert) > 200 {
		t.Fatalf("exit %d, alert line %q: want one short line naming the URL once and SWITCHBOARD_EGRESS_ALLOW\n%s", code, alert, stdout)
	}
	if code, stdout, stderr := runCLI(t, map[string]string{"SWITCHBOARD_EGRESS_ALLOW": "0.0.0.0/32"}, "simulate", refused); code != exitOK {
		t.Fatalf("allowed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, map[string]string{"SWITCHBOARD_EGRESS_ALLOW": "not a host!"}, "simulate", refused)
	if code != exitUsage || !strings.Contains(stderr, "SWITCHBOARD_EGRESS_ALLOW") || stdout != "" {
		t.Fatalf("bad value: exit %d, stderr %q", code, stderr)
	}
}

// --real-time runs the call on the wall clock: the app sees its retry half a second
// after the first attempt (on the simulated clock the retry comes at once).
func TestSimulateRealTime(t *testing.T) {
	noLeaks(t)
	var mu sync.Mutex
	var at []time.Time
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"hangup"}]`))
	}))
	t.Cleanup(app.Close)
	code, stdout, stderr := runCLI(t, nil, "simulate", "--json", "--real-time", app.URL+"/call#rc=1&rp=5xx")
	wantExit(t, code, exitFailure, stdout, stderr) // an app that hangs up before answering: the call failed (603)
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 || at[1].Sub(at[0]) < 500*time.Millisecond {
		t.Fatalf("the app saw %d requests, %v apart: want the retry after a real 0.5 s", len(at), at[len(at)-1].Sub(at[0]))
	}
	events, summary := jsonLines(t, stdout)
	checkContract(t, events, summary)
	if summary["wall_ms"].(float64) < 500 {
		t.Fatalf("summary %v: the run took the real delay", summary)
	}
}

// A scenario can name its app and status hook; simulate uses them when no APP_URL
// or --status-hook is given.
func TestSimulateAppFromScenario(t *testing.T) {
	httpURL, _ := exampleServers(t)
	sc := filepath.Join(t.TempDir(), "s.yaml")
	src := "app: " + httpURL + "/call\nstatus_hook: /status\nexpect:\n  hook_counts: {/status: 3}\n"
	if err := os.WriteFile(sc, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, nil, "simulate", "--scenario", sc); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// simulate --scenario reads a file as test does (docs/testing.md §1): ${VAR} and
// ${VAR:-default} from the environment, the app: of the folder's
// switchboard-test.yaml, and one case of a file with cases: (--case NAME; the only
// one without it). A case marked skip: is played, with a note on stderr.
func TestSimulateReadsScenarioFilesAsTestDoes(t *testing.T) {
	httpURL, _ := exampleServers(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("switchboard-test.yaml", "app: ${APP}/call\n")
	menu := write("menu.yaml", `status_hook: ${STATUS_HOOK:-/status}
expect:
  hook_counts: {/status: 3}
cases:
  - name: sales
    caller: {gathers: [{digits: "${DIGIT}"}]}
    expect:
      received: [{hook: /gather, payload: {digits: "${DIGIT}"}}]
  - name: no-input
    skip: the menu's timeout prompt is being rewritten
    caller: {gathers: [{timeout: true}]}
    expect: {verbs: [say, gather, say, hangup]}
`)
	one := write("one.yaml", "cases:\n  - name: only\n    expect: {hooks: [/call]}\n")
	env := map[string]string{"APP": httpURL, "DIGIT": "2"}

	code, stdout, stderr := runCLI(t, env, "simulate", "--scenario", menu, "--case", "sales")
	wantExit(t, code, exitOK, stdout, stderr)
	if !strings.Contains(stdout, "the caller keys 2") || stderr != "" {
		t.Fatalf("case sales:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	env["DIGIT"] = "3" // the expectation reads the variable too: the call keys 3 and expects it
	code, stdout, stderr = runCLI(t, env, "simulate", "--scenario", menu, "--case", "sales")
	wantExit(t, code, exitOK, stdout, stderr)

	code, stdout, stderr = runCLI(t, env, "simulate", "--scenario", menu, "--case", "no-input")
	wantExit(t, code, exitOK, stdout, stderr)
	if !strings.Contains(stderr, "menu.yaml case no-input is marked skip: the menu's timeout prompt is being rewritten (simulate plays it all the same)") {
		t.Fatalf("a skipped case: stderr %q", stderr)
	}
	// A file of one case needs no --case; APP_URL wins over the folder's app:.
	code, stdout, stderr = runCLI(t, env, "simulate", "--scenario", one, httpURL+"/call")
	wantExit(t, code, exitOK, stdout, stderr)

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--scenario", menu}, env, "menu.yaml: has 2 cases (sales, no-input): choose one with --case NAME"},
		{[]string{"--scenario", menu, "--case", "support"}, env, `menu.yaml: has no case "support": its cases are sales, no-input`},
		{[]string{"--scenario", write("plain.yaml", "app: "+httpURL+"/call\n"), "--case", "sales"}, env, "plain.yaml: has no cases: to choose from (leave out --case sales)"},
		{[]string{"--case", "sales", httpURL + "/call"}, env, "--case goes with --scenario"},
		{[]string{"--scenario", menu, "--case", "sales"}, map[string]string{"APP": httpURL}, "menu.yaml:6: ${DIGIT}: DIGIT is not set (give a default: ${DIGIT:-value})"},
		{[]string{"--scenario", menu, "--case", "sales"}, map[string]string{"DIGIT": "1"}, "switchboard-test.yaml:1: ${APP}: APP is not set"},
	} {
		code, stdout, stderr := runCLI(t, tc.env, append([]string{"simulate"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 saying %q", tc.args, code, stderr, stdout, tc.want)
		}
	}
}
