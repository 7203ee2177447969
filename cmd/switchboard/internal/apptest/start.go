package apptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/appstart"
)

// stopGrace is how long a started app has to exit after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// appSpec is an application to start for some scenarios: --start for all of them,
// or a folder's start: for the folder's.
type appSpec struct {
	command string
	dir     string        // working directory, "" for the current one
	timeout time.Duration // to accept connections
	watch   []string      // what --watch watches for it
	cases   []*testCase
	source  string // "--start", or the folder's switchboard-test.yaml
	reuse   bool   // not started when its addresses already accept connections
}

// startSpecs are the apps to start for cases: --start, else the start: of each
// folder that has one, unless --no-start.
func startSpecs(c Config, cases []*testCase) []*appSpec {
	if c.NoStart {
		return nil
	}
	if c.Start != "" {
		return []*appSpec{{command: c.Start, timeout: c.StartTimeout, watch: []string{"."}, cases: cases, source: "--start"}}
	}
	var specs []*appSpec
	byFolder := map[*folder]*appSpec{}
	for _, tc := range cases {
		fo := tc.folder
		if fo.cfg.Start == "" {
			continue
		}
		spec, ok := byFolder[fo]
		if !ok {
			dir := filepath.Join(fo.dir, fo.cfg.Dir)
			spec = &appSpec{command: fo.cfg.Start, dir: dir, timeout: fo.startTimeout(c.StartTimeout), source: fo.configFile, reuse: fo.cfg.Reuse}
			spec.watch = []string{dir}
			if fo.cfg.Watch != nil {
				spec.watch = nil
				for _, w := range fo.cfg.Watch {
					spec.watch = append(spec.watch, filepath.Join(fo.dir, w))
				}
			}
			byFolder[fo] = spec
			specs = append(specs, spec)
		}
		spec.cases = append(spec.cases, tc)
	}
	return specs
}

// addrs are the addresses the spec's scenarios connect to, each once.
func (s *appSpec) addrs() []string {
	var out []string
	for _, tc := range s.cases {
		if a, err := hostPort(tc.app); err == nil && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// key identifies an app across reloads of the suite.
func (s *appSpec) key() string { return s.source + "\x00" + s.dir + "\x00" + s.command }

// startedApp is an app started for a run.
type startedApp struct {
	spec *appSpec
	app  *appstart.App
}

// apps are the apps started for a run.
type apps struct {
	c       Config
	logs    *logSink
	started []*startedApp
	mu      sync.Mutex
	told    map[*startedApp]bool // whose exit has been told on stderr
	binDir  string               // the directory of startEnv's switchboard link, once made
}

// startAll starts every spec's app and waits for each to accept connections. On a
// failure it says why on stderr, with the app's output, stops the apps it started
// and returns the reason.
func (as *apps) startAll(ctx context.Context, specs []*appSpec) error {
	for _, spec := range specs {
		if err := as.start(ctx, spec); err != nil {
			if !as.c.Watch { // watching, the others keep running for the next try
				as.stopAll()
			}
			return err
		}
	}
	return nil
}

func (as *apps) start(ctx context.Context, spec *appSpec) error {
	if spec.reuse && allAccept(ctx, spec.addrs()) {
		verb := "accepts" // one address, the usual case; several agree with "accept"
		if len(spec.addrs()) > 1 {
			verb = "accept"
		}
		fmt.Fprintf(as.c.Stderr, "switchboard: %s already %s connections: using the app running there, not starting %q (reuse: in %s)\n",
			strings.Join(spec.addrs(), ", "), verb, spec.command, spec.source)
		return nil
	}
	// Another process listening there would be what the scenarios test: the app
	// started would fail to listen (its port is taken) while its wait for the
	// address succeeded at once.
	if busy := accepting(ctx, spec.addrs()); len(busy) > 0 {
		how := "leave out --start to test the app running there"
		if spec.source != "--start" {
			how = "give --no-start, or reuse: true in " + spec.source + ", to test the app running there"
		}
		err := fmt.Errorf("another process already listens at %s, before the app is started (stop it, or %s)", strings.Join(busy, ", "), how)
		fmt.Fprintf(as.c.Stderr, "switchboard: did not start the app (%s, from %s): %v\n", spec.command, spec.source, err)
		return fmt.Errorf("the app was not started: %w", err)
	}
	a, err := appstart.Start(appstart.Options{Command: spec.command, Dir: spec.dir, Env: as.startEnv(), Output: as.output(spec)})
	if err != nil {
		fmt.Fprintf(as.c.Stderr, "switchboard: the app (%s, from %s) did not start: %v\n", spec.command, spec.source, err)
		return fmt.Errorf("the app did not start: %w", err)
	}
	if err := a.WaitReady(ctx, spec.addrs(), spec.timeout); err != nil {
		fmt.Fprintf(as.c.Stderr, "switchboard: the app (%s, from %s) did not start: %v\n%s", spec.command, spec.source, err, outputBlock(a))
		a.Stop(stopGrace)
		return fmt.Errorf("the app did not start: %w", err)
	}
	as.started = append(as.started, &startedApp{spec: spec, app: a})
	return nil
}

// notRunning are the specs whose app is not running: never started, or exited.
func (as *apps) notRunning(specs []*appSpec) []*appSpec {
	var out []*appSpec
	for _, spec := range specs {
		i := slices.IndexFunc(as.started, func(s *startedApp) bool { return s.spec.key() == spec.key() })
		if i >= 0 {
			if exited, _ := as.started[i].app.Exited(); !exited {
				as.started[i].spec = spec // the suite was read again: its cases are these
				continue
			}
			as.stop(i)
		}
		out = append(out, spec)
	}
	return out
}

// restart stops the app of spec, if it runs, so that the next run starts it again.
func (as *apps) restart(spec *appSpec) {
	if i := slices.IndexFunc(as.started, func(s *startedApp) bool { return s.spec.key() == spec.key() }); i >= 0 {
		as.stop(i)
	}
}

func (as *apps) stop(i int) {
	as.started[i].app.Stop(stopGrace)
	as.started = slices.Delete(as.started, i, i+1)
}

// allAccept reports whether every address accepts a TCP connection now.
func allAccept(ctx context.Context, addrs []string) bool {
	return len(addrs) > 0 && len(accepting(ctx, addrs)) == len(addrs)
}

// accepting are the addresses that accept a TCP connection now.
func accepting(ctx context.Context, addrs []string) []string {
	var out []string
	for _, addr := range addrs {
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			continue
		}
		conn.Close()
		out = append(out, addr)
	}
	return out
}

// stopAll stops the apps started, the last first.
func (as *apps) stopAll() {
	for i := len(as.started) - 1; i >= 0; i-- {
		as.started[i].app.Stop(stopGrace)
	}
	as.started = nil
}

// down says, for a scenario whose call reached nothing, that the app started for
// it has exited (telling its output on stderr once); "" when it runs or none was
// started for it.
func (as *apps) down(tc *testCase) string {
	for _, s := range as.started {
		if !slices.Contains(s.spec.cases, tc) {
			continue
		}
		exited, err := s.app.Exited()
		if !exited {
			return ""
		}
		as.mu.Lock()
		if as.told == nil {
			as.told = map[*startedApp]bool{}
		}
		if !as.told[s] {
			as.told[s] = true
			fmt.Fprintf(as.c.Stderr, "switchboard: the app (%s) exited during the run: %s\n%s", s.spec.command, exitText(err), outputBlock(s.app))
		}
		as.mu.Unlock()
		return fmt.Sprintf("the app (%s) exited during the run (%s): its output is on stderr", s.spec.command, exitText(err))
	}
	return ""
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// outputBlock is the app's output, indented, for stderr.
func outputBlock(a *appstart.App) string {
	out := strings.TrimRight(a.Output(), "\n")
	if out == "" {
		return "  (it wrote nothing)\n"
	}
	return "  its output (the last 16 KiB):\n" + indent(out, "  | ")
}

// output is where an app's output goes besides its tail: stderr with -v, each line
// marked with the app's command; the log file, each line a JSON log entry.
func (as *apps) output(spec *appSpec) io.Writer {
	var ws []io.Writer
	if as.c.Verbose {
		ws = append(ws, &lineWriter{line: func(l string) { fmt.Fprintf(as.c.Stderr, "app| %s\n", l) }})
	}
	if as.logs.w != nil {
		log := as.logs.appLogger(spec.command)
		ws = append(ws, &lineWriter{line: func(l string) { log.Info().Msg(l) }})
	}
	return io.MultiWriter(ws...)
}

// startEnv is the environment of a started app: the process's, with a directory
// first on PATH that holds only `switchboard`, a link to this very binary, so that
// a start command naming it (switchboard demo --serve ...) runs the binary testing
// it, however that is named (go run's build, a release download) and wherever it
// lies. Every other command resolves as in the developer's shell: prepending the
// binary's own directory (/usr/local/bin, ~/go/bin) would put whatever else lies
// there (another node) before the developer's choice. Without a link (no
// executable path, no temporary directory) PATH is left as it is.
func (as *apps) startEnv() []string {
	env := os.Environ()
	if as.binDir == "" {
		exe, err := os.Executable()
		if err != nil {
			return env
		}
		dir, err := os.MkdirTemp("", "switchboard-test-bin-")
		if err != nil {
			return env
		}
		if err := os.Symlink(exe, filepath.Join(dir, "switchboard")); err != nil {
			os.RemoveAll(dir)
			return env
		}
		as.binDir = dir
	}
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + as.binDir + string(os.PathListSeparator) + v
			return env
		}
	}
	return append(env, "PATH="+as.binDir)
}

// close stops the apps started and removes what starting them made.
func (as *apps) close() {
	as.stopAll()
	if as.binDir != "" {
		os.RemoveAll(as.binDir)
		as.binDir = ""
	}
}

// lineWriter calls line with each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}
