package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// simulateTimeout bounds one `switchboard simulate` or `switchboard test` run
// (simulated time runs fast; this only catches a hang, and leaves room for the
// minute-long handshake and ack bounds of loadTolerantEnv on a loaded machine).
const simulateTimeout = 5 * time.Minute

// line is one JSON object `simulate --json` printed.
type line map[string]any

func (l line) str(key string) string {
	s, _ := l[key].(string)
	return s
}

func (l line) num(key string) float64 {
	n, _ := l[key].(float64)
	return n
}

// timeline is the parsed output of one simulate run.
type timeline []line

// simulation is the result of running the binary.
type simulation struct {
	lines    timeline
	exitCode int
	stderr   string
}

// runSimulate runs `switchboard simulate --json args...` and parses its output. Every
// stdout line must be a JSON object with a kind: that is the --json contract.
func runSimulate(t *testing.T, args ...string) simulation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), simulateTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, switchboardBin, append([]string{"simulate", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), loadTolerantEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	sim := simulation{stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		sim.exitCode = exitErr.ExitCode()
	default:
		t.Fatalf("switchboard simulate %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("simulate --json printed a line that is not a JSON object: %q (%v)", sc.Text(), err)
		}
		if l.str("kind") == "" {
			t.Fatalf("simulate --json line without kind: %q", sc.Text())
		}
		sim.lines = append(sim.lines, l)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			for _, l := range sim.lines {
				j, _ := json.Marshal(l)
				b.Write(j)
				b.WriteByte('\n')
			}
			t.Logf("simulate %v exit %d\nstdout:\n%sstderr:\n%s", args, sim.exitCode, b.String(), sim.stderr)
		}
	})
	sim.lines.checkShape(t)
	return sim
}

// checkShape checks what every run must satisfy: each call line has t_ms and
// call_sid, simulated time never goes backwards within a call, each call starts with
// call.start and ends with call.end, and the last line is the summary.
func (tl timeline) checkShape(t *testing.T) {
	t.Helper()
	if len(tl) == 0 {
		t.Fatal("simulate printed nothing")
	}
	if tl[len(tl)-1].str("kind") != "summary" {
		t.Errorf("last line kind = %q, want summary", tl[len(tl)-1].str("kind"))
	}
	last := map[string]float64{}
	started := map[string]bool{}
	ended := map[string]bool{}
	for _, l := range tl[:len(tl)-1] {
		sid := l.str("call_sid")
		if sid == "" {
			t.Errorf("line without call_sid: %v", l)
			continue
		}
		ms, ok := l["t_ms"].(float64)
		if !ok {
			t.Errorf("line without t_ms: %v", l)
		}
		if ms < last[sid] {
			t.Errorf("t_ms went backwards in call %s: %v after %v", sid, ms, last[sid])
		}
		last[sid] = ms
		switch l.str("kind") {
		case "call.start":
			started[sid] = true
		case "call.end":
			ended[sid] = true
		default:
			if !started[sid] {
				t.Errorf("%s before call.start of %s", l.str("kind"), sid)
			}
			if ended[sid] {
				t.Errorf("%s after call.end of %s", l.str("kind"), sid)
			}
		}
	}
	for sid := range started {
		if !ended[sid] {
			t.Errorf("call %s has no call.end", sid)
		}
	}
}

// wantVerbs checks the verbs started, in order.
func (tl timeline) wantVerbs(t *testing.T, want ...string) {
	t.Helper()
	if got := tl.values("verb.start", "verb"); !slices.Equal(got, want) {
		t.Errorf("verbs started %v, want %v", got, want)
	}
}

// kind returns the lines of one kind.
func (tl timeline) kind(kind string) timeline {
	var out timeline
	for _, l := range tl {
		if l.str("kind") == kind {
			out = append(out, l)
		}
	}
	return out
}

// one returns the single line of kind, failing the test when there is not exactly one.
func (tl timeline) one(t *testing.T, kind string) line {
	t.Helper()
	ls := tl.kind(kind)
	if len(ls) != 1 {
		t.Fatalf("%d %s lines, want 1", len(ls), kind)
	}
	return ls[0]
}

// values returns key of every line of kind, in order.
func (tl timeline) values(kind, key string) []string {
	var out []string
	for _, l := range tl.kind(kind) {
		out = append(out, l.str(key))
	}
	return out
}

// index returns the position of the first line of kind whose key equals value at or
// after from, or -1.
func (tl timeline) index(from int, kind, key, value string) int {
	for i := from; i < len(tl); i++ {
		if tl[i].str("kind") == kind && (key == "" || tl[i].str(key) == value) {
			return i
		}
	}
	return -1
}

// inOrder checks that the given (kind, key=value) steps occur in this order, not
// necessarily adjacent.
func (tl timeline) inOrder(t *testing.T, steps ...[3]string) {
	t.Helper()
	at := 0
	for _, s := range steps {
		i := tl.index(at, s[0], s[1], s[2])
		if i < 0 {
			t.Errorf("no %s %s=%q after line %d (steps %v)", s[0], s[1], s[2], at, steps)
			return
		}
		at = i + 1
	}
}

// step is one (kind, key, value) for inOrder.
func step(kind, key, value string) [3]string { return [3]string{kind, key, value} }

// simulateScenario runs `simulate --json --scenario FILE args...` with the scenario
// given as YAML, expects exit status 0 and returns the timeline.
func simulateScenario(t *testing.T, scenario string, args ...string) timeline {
	t.Helper()
	sim := runSimulate(t, append([]string{"--scenario", writeScenario(t, scenario)}, args...)...)
	if sim.exitCode != 0 {
		t.Errorf("exit code %d, want 0", sim.exitCode)
	}
	return sim.lines
}

// writeScenario writes a scenario file for `simulate --scenario`.
func writeScenario(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
