package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownNetwork returns the argv prefix that runs a command in a network namespace of
// its own with loopback up: there an app listens on the fixed port its scenarios
// name (3000) with no other process to collide with. It needs root (unshare -n):
// skipped without it, failed under CI=true.
func ownNetwork(t *testing.T) []string {
	t.Helper()
	unshare, err1 := exec.LookPath("unshare")
	ip, err2 := exec.LookPath("ip")
	if err := errors.Join(err1, err2); err == nil {
		if out, err := exec.Command(unshare, "-n", ip, "link", "set", "lo", "up").CombinedOutput(); err != nil {
			err2 = errors.New(strings.TrimSpace(string(out)))
		}
	}
	if err := errors.Join(err1, err2); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a network namespace of its own is needed under CI=true: %v", err)
		}
		t.Skipf("skipping: needs a network namespace of its own (root, unshare -n, ip): %v; under CI=true this is a failure", err)
	}
	return []string{unshare, "-n", "sh", "-c", ip + ` link set lo up && exec "$@"`, "sh"}
}

// sbTestIsolated runs `switchboard test args...` in dir, in a network namespace of
// its own.
func sbTestIsolated(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	argv := append(ownNetwork(t), switchboardBin, "test")
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
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

// --start starts an app on the official SDK that takes a second to listen, waits
// for it, runs the scenarios against it and stops it; one that never listens is an
// error for every scenario, its output on stderr.
func TestAppTestStartsANodeApp(t *testing.T) {
	t.Parallel()
	node, modules := requireNodeSDKs(t)
	script, err := filepath.Abs(filepath.Join(nodeTestdata, "ws_slow_start.js"))
	if err != nil {
		t.Fatal(err)
	}
	dir := files(t, map[string]string{"tests/menu.yaml": `app: ws://127.0.0.1:3000/app
caller:
  gathers: [{digits: "7"}]
expect:
  verbs: [say, gather, say, hangup]
  received:
    - type: verb:hook
      hook: /menu
      payload: {digits: "7"}
`})
	pidFile := filepath.Join(dir, "app.pid")
	env := []string{"NODE_PATH=" + modules, "PORT=3000", "PID_FILE=" + pidFile, "PATH=" + filepath.Dir(node) + ":/usr/bin:/bin"}
	code, stdout, stderr := sbTestIsolated(t, dir, env, "--start", "node "+script, "tests")
	if code != 0 || !strings.Contains(stdout, "ok    menu  ") || !strings.Contains(stdout, "PASS: 1 scenario(s)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the app wrote no pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err := syscall.Kill(pid, 0); err == nil {
		if stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(stat), ") Z ") {
			t.Fatalf("the app (pid %d) still runs after the tests: %s", pid, stat)
		}
	}

	// An app that exits at once: nothing runs, every scenario is an error saying
	// so, and the app's output is on stderr.
	code, stdout, stderr = sbTestIsolated(t, dir, env, "--start", "echo config missing; exit 4", "tests")
	if code != 1 || !strings.Contains(stdout, "ERROR menu  ") ||
		!strings.Contains(stdout, "the app did not start: it exited (exit status 4) before accepting connections at 127.0.0.1:3000") ||
		!strings.Contains(stderr, "  | config missing\n") {
		t.Fatalf("an app that exits: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// A fresh copy of examples/ runs green with the one command docs/testing.md §8
// gives: its switchboard-test.yaml starts the example apps.
func TestExamplesRunWithOneCommand(t *testing.T) {
	t.Parallel()
	clone := t.TempDir()
	if err := os.CopyFS(filepath.Join(clone, "examples"), os.DirFS(filepath.Join("..", "examples"))); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := sbTestIsolated(t, clone, nil, "examples/scenarios")
	oks := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "ok    ") {
			oks++
		}
	}
	if n := len(exampleScenarioFiles(t)); code != 0 || oks != n || !strings.Contains(stdout, "PASS: "+strconv.Itoa(n)+" scenario(s)") {
		t.Fatalf("exit %d, %d ok of %d\nstdout:\n%s\nstderr:\n%s", code, oks, n, stdout, stderr)
	}
}

// --watch runs the scenarios again when a scenario file changes (that file's only),
// and when a file of the app changes (the folder's watch:); Ctrl-C ends it with the
// verdict of the last run.
func TestAppTestWatch(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{
		"app/menu.txt":                "v1\n",
		"tests/switchboard-test.yaml": "watch: [../app]\napp: " + app.origin + "/call\n",
		"tests/a.yaml":                "caller:\n  gathers: [{digits: \"1\"}]\n",
		"tests/b.yaml":                "caller:\n  gathers: [{digits: \"2\"}]\n",
	})
	cmd := exec.Command(switchboardBin, "test", "--watch", "tests")
	cmd.Dir, cmd.Env = dir, cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// untilWaiting collects the lines of one run, up to the line saying the files
	// are watched again.
	untilWaiting := func(what string) string {
		t.Helper()
		var got []string
		deadline := time.After(simulateTimeout)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("%s: switchboard exited: %v\n%s\n%s", what, <-exited, strings.Join(got, "\n"), stderr.String())
				}
				if l == "watching for changes (Ctrl-C to stop)" {
					return strings.Join(got, "\n")
				}
				got = append(got, l)
			case <-deadline:
				t.Fatalf("%s: no run:\n%s", what, strings.Join(got, "\n"))
			}
		}
	}
	if run := untilWaiting("the first run"); !strings.Contains(run, "ok    a  ") || !strings.Contains(run, "ok    b  ") {
		t.Fatalf("the first run:\n%s", run)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "b.yaml"), []byte("caller:\n  gathers: [{digits: \"2\"}]\nexpect:\n  verbs: [hangup]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if run := untilWaiting("b.yaml changed"); !strings.Contains(run, "--- tests/b.yaml changed: running 1 scenario(s)") ||
		!strings.Contains(run, "FAIL  b  ") || strings.Contains(run, "    a  ") {
		t.Fatalf("b.yaml changed:\n%s", run)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "b.yaml"), []byte("caller:\n  gathers: [{digits: \"2\"}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	untilWaiting("b.yaml mended")
	// What editors and sed -i leave in the app's files for a moment (a temporary
	// file, created then renamed away) or beside them (a backup) changes nothing:
	// the next run is the scenario file's alone.
	tmp := filepath.Join(dir, "app", "sedX1b2c3")
	if err := os.WriteFile(tmp, []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", "menu.txt~"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "a.yaml"), []byte("caller:\n  gathers: [{digits: \"1\"}]\n# touched\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if run := untilWaiting("a temporary file, a backup, then a.yaml"); !strings.HasPrefix(run, "\n--- tests/a.yaml changed: running 1 scenario(s)\n") {
		t.Fatalf("a temporary file, a backup, then a.yaml: the next run is\n%s", run)
	}
	if err := os.WriteFile(filepath.Join(dir, "app", "menu.txt"), []byte("v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if run := untilWaiting("the app changed"); !strings.Contains(run, "--- app/menu.txt changed: running 2 scenario(s)") ||
		!strings.Contains(run, "ok    a  ") || !strings.Contains(run, "ok    b  ") {
		t.Fatalf("the app changed:\n%s", run)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := <-exited; err != nil {
		t.Fatalf("Ctrl-C after a passing run: %v\n%s", err, stderr.String())
	}
}

// An app already listening where the scenarios connect is not what --start would
// test: nothing is started (the app would fail to listen while its wait succeeded
// at once against the other process), nothing is called, and every scenario is an
// error that says so; with reuse: in the folder's settings, that app is tested.
func TestAppTestStartRefusesATakenPort(t *testing.T) {
	t.Parallel()
	app := newScenarioApp(t)
	dir := files(t, map[string]string{
		"menu.yaml":             "app: " + app.origin + "/call\nexpect:\n  verbs: [say, gather, say, hangup]\n",
		"switchboard-test.yaml": "start: touch started-from-folder\n",
	})
	addr := strings.TrimPrefix(app.origin, "http://")
	code, stdout, stderr := sbTest(t, dir, nil, "--start", "touch started", ".")
	if code != 1 || !strings.Contains(stdout, "ERROR menu  ") ||
		!strings.Contains(stdout, "the app was not started: another process already listens at "+addr+", before the app is started (stop it, or leave out --start to test the app running there)") ||
		!strings.Contains(stderr, "switchboard: did not start the app (touch started, from --start): another process already listens at "+addr) ||
		!strings.Contains(stdout, "\nFAIL: 1 of 1 scenario(s) failed, 1 error(s), 0 passed, in ") ||
		app.calls.Load() != 0 {
		t.Fatalf("--start: exit %d, %d calls\nstdout:\n%s\nstderr:\n%s", code, app.calls.Load(), stdout, stderr)
	}
	code, stdout, _ = sbTest(t, dir, nil, ".")
	if code != 1 || !strings.Contains(stdout, "(stop it, or give --no-start, or reuse: true in switchboard-test.yaml, to test the app running there)") {
		t.Fatalf("start: exit %d\n%s", code, stdout)
	}
	for _, marker := range []string{"started", "started-from-folder"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			t.Errorf("%s ran", marker)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "switchboard-test.yaml"), []byte("start: touch started-from-folder\nreuse: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = sbTest(t, dir, nil, ".")
	if code != 0 || !strings.Contains(stderr, "switchboard: "+addr+" already accepts connections: using the app running there, not starting \"touch started-from-folder\" (reuse: in switchboard-test.yaml)") || app.calls.Load() != 1 {
		t.Fatalf("reuse: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// `switchboard` in a start command is the binary running the tests whatever it is
// named (here sb, beside a tool of the same name as one earlier on PATH), and every
// other command of the start command resolves as in the developer's shell: the
// binary's own directory is not put first on PATH.
func TestAppTestStartRunsThisBinaryAsSwitchboard(t *testing.T) {
	t.Parallel()
	bin, mine := t.TempDir(), t.TempDir()
	raw, err := os.ReadFile(switchboardBin)
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		filepath.Join(bin, "sb"):          string(raw),
		filepath.Join(bin, "which-am-i"):  "#!/bin/sh\necho the binary's directory\n",
		filepath.Join(mine, "which-am-i"): "#!/bin/sh\necho mine\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := files(t, map[string]string{"tests/menu.yaml": "app: http://127.0.0.1:3000/call\nexpect:\n  verbs: [say, gather, say, hangup]\n"})
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	argv := append(ownNetwork(t), filepath.Join(bin, "sb"), "test", "--start", "which-am-i > tool.txt; exec switchboard demo --serve 127.0.0.1:3000", "tests")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+mine+":"+bin+":/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok    menu  ") {
		t.Fatalf("sb test --start 'switchboard demo --serve ...': %v\n%s", err, out)
	}
	if tool, _ := os.ReadFile(filepath.Join(dir, "tool.txt")); string(tool) != "mine\n" {
		t.Fatalf("which-am-i in the start command ran %q, want the one first on the developer's PATH", tool)
	}
	if links, _ := filepath.Glob(filepath.Join(os.TempDir(), "switchboard-test-bin-*")); len(links) > 0 {
		// Other tests' runs may hold theirs for now; ours must be gone: it is the
		// only one whose link points at bin/sb.
		for _, l := range links {
			if target, _ := os.Readlink(filepath.Join(l, "switchboard")); target == filepath.Join(bin, "sb") {
				t.Errorf("%s is left after the run", l)
			}
		}
	}
}
