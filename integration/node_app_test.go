package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// appStartTimeout bounds how long a Node app may take to print its ready line: loading
// the SDKs (@jambonz/sdk, verb-specifications' schemas) takes seconds of CPU that a
// loaded 2-core machine may hand out slowly. A bound only a broken app reaches: the
// wait ends as soon as the line comes.
const appStartTimeout = 3 * time.Minute

// appEvent is one JSON line an app printed: {"event":"...", ...}, read as the
// lines of `simulate --json` are.
type appEvent = line

// nodeApp is a running Node test app.
type nodeApp struct {
	port int

	mu     sync.Mutex
	events []appEvent
	stderr testkit.SyncBuffer
	wake   chan struct{} // closed and replaced whenever an event arrives
	done   chan struct{} // closed when stdout reaches EOF
}

// startNodeApp runs testdata/node/<script> with env added to the environment, waits
// for its ready line and stops it when the test ends. The app listens on a port the
// kernel picks (PORT=0), which its ready line reports: a port the test picked and
// closed could be taken by anything else on a busy machine before the app listens
// (an example app was seen to die of EADDRINUSE that way).
func startNodeApp(t *testing.T, script string, env ...string) *nodeApp {
	t.Helper()
	node, modules := requireNodeSDKs(t)
	app := &nodeApp{wake: make(chan struct{}), done: make(chan struct{})}
	cmd := exec.Command(node, filepath.Join(nodeTestdata, script))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "PORT=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = &app.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", script, err)
	}
	go app.read(stdout)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		waitOrKill(cmd, 5*time.Second)
		if t.Failed() {
			t.Logf("%s events: %v\n%s stderr:\n%s", script, app.Events(), script, app.Stderr())
		}
	})
	ready, ok := app.waitEvent("ready", appStartTimeout)
	if !ok {
		t.Fatalf("%s printed no ready line within %s; stderr:\n%s", script, appStartTimeout, app.Stderr())
	}
	if app.port = int(ready.num("port")); app.port <= 0 {
		t.Fatalf("%s's ready line %v names no port", script, ready)
	}
	return app
}

// read collects the app's JSON lines; anything else the SDK prints is ignored.
func (a *nodeApp) read(r interface{ Read([]byte) (int, error) }) {
	defer close(a.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var ev appEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.str("event") == "" {
			continue
		}
		a.mu.Lock()
		a.events = append(a.events, ev)
		close(a.wake)
		a.wake = make(chan struct{})
		a.mu.Unlock()
	}
}

// noJambonzErrors fails t when the app got any jambonz:error (the node found fault
// with what it sent).
func (a *nodeApp) noJambonzErrors(t *testing.T) {
	t.Helper()
	if errs := a.Named("jambonz:error"); len(errs) != 0 {
		t.Errorf("app got jambonz:error: %v", errs)
	}
}

// Events returns a copy of the events so far.
func (a *nodeApp) Events() []appEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]appEvent(nil), a.events...)
}

// Stderr returns what the app wrote to stderr so far.
func (a *nodeApp) Stderr() string { return a.stderr.String() }

// Named returns the events called name.
func (a *nodeApp) Named(name string) []appEvent {
	var out []appEvent
	for _, e := range a.Events() {
		if e.str("event") == name {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits until an event called name has arrived (returning the first one),
// the app's stdout closed or timeout passed.
func (a *nodeApp) waitEvent(name string, timeout time.Duration) (appEvent, bool) {
	evs, ok := a.waitEvents(name, 1, timeout)
	if !ok {
		return nil, false
	}
	return evs[0], true
}

// waitMatch waits until an event called name for which match holds has arrived.
func (a *nodeApp) waitMatch(name string, match func(appEvent) bool, timeout time.Duration) (appEvent, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		wake := a.wake
		for _, e := range a.events {
			if e.str("event") == name && match(e) {
				a.mu.Unlock()
				return e, true
			}
		}
		a.mu.Unlock()
		select {
		case <-wake:
		case <-a.done:
			return nil, false
		case <-deadline.C:
			return nil, false
		}
	}
}

// waitEvents waits until n events called name have arrived and returns them all.
func (a *nodeApp) waitEvents(name string, n int, timeout time.Duration) ([]appEvent, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		wake := a.wake
		var found []appEvent
		for _, e := range a.events {
			if e.str("event") == name {
				found = append(found, e)
			}
		}
		a.mu.Unlock()
		if len(found) >= n {
			return found, true
		}
		select {
		case <-wake:
		case <-a.done:
			return found, false
		case <-deadline.C:
			return found, false
		}
	}
}

// URL is the app's address with scheme (http or ws) and path.
func (a *nodeApp) URL(scheme, path string) string {
	return fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, a.port, path)
}
