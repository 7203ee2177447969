package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// demoServe runs `switchboard demo --serve` on a free loopback port and returns the
// origin of its example apps (http://127.0.0.1:PORT: /call, /ws).
func demoServe(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(switchboardBin, "demo", "--serve", "127.0.0.1:0")
	cmd.Env = cleanEnv()
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
	origin := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "HTTP webhooks  "); ok {
				origin <- strings.TrimSuffix(u, "/call")
			}
		}
	}()
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case o := <-origin:
		return o
	case err := <-exited:
		t.Fatalf("demo --serve exited: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("demo --serve did not listen\n%s", stderr.String())
	}
	return ""
}

// runTestCmd runs `switchboard test args...` from the module root.
func runTestCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, switchboardBin, append([]string{"test"}, args...)...)
	cmd.Dir = ".."
	cmd.Env = cleanEnv()
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

// The README's tour: `switchboard test examples/scenarios` against `demo
// --serve` passes, every example on its own "ok" line. (--app moves the examples'
// 127.0.0.1:3000 to the port demo got.)
func TestExampleScenariosPassAgainstDemo(t *testing.T) {
	t.Parallel()
	origin := demoServe(t)
	code, stdout, stderr := runTestCmd(t, "--no-start", "--app", origin, "examples/scenarios")
	files := exampleScenarioFiles(t)
	oks := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "ok    ") {
			oks++
		}
	}
	if code != 0 || len(files) < 5 || oks != len(files) || !strings.Contains(stdout, "PASS: ") {
		t.Fatalf("exit %d, %d example files\n%s\n%s", code, len(files), stdout, stderr)
	}
}

// A scenario broken on purpose fails: the output names the expectation that did not
// hold, and so does the JUnit report, read back with encoding/xml.
func TestBrokenScenarioFailsNamingTheExpectation(t *testing.T) {
	t.Parallel()
	origin := demoServe(t)
	report := filepath.Join(t.TempDir(), "report.xml")
	code, stdout, _ := runTestCmd(t, "--no-start", "--app", origin, "--junit", report, "examples/scenarios", "integration/testdata/scenarios")
	const want = `received[1]: the 1st /gather: payload digits is "1", want "2"`
	if code != 1 || !strings.Contains(stdout, "FAIL  http-sales-broken") || !strings.Contains(stdout, want) || !strings.Contains(stdout, "ok    ws-speech") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, raw)
	}
	var failed []string
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failed = append(failed, s.Name+"/"+c.Name+": "+c.Failure.Type+": "+c.Failure.Message)
			}
		}
	}
	if doc.Failures != 1 || len(doc.Suites) != 2 || len(failed) != 1 || failed[0] != "integration/testdata/scenarios/http-sales-broken: received[1]: "+want {
		t.Fatalf("failures %d in %d suites: %v", doc.Failures, len(doc.Suites), failed)
	}
}

// exampleScenarioFiles are the scenario files of examples/scenarios: its YAML files
// but the folder's settings (switchboard-test.yaml).
func exampleScenarioFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join("..", "examples", "scenarios", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if filepath.Base(f) != "switchboard-test.yaml" {
			files = append(files, f)
		}
	}
	return files
}
