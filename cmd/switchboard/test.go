package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

func init() { extraCommands = append(extraCommands, newTestCmd) }

// defaultScenarioDir is where `switchboard test` looks without arguments.
const defaultScenarioDir = "scenarios"

type testFlags struct {
	network    map[string]string // the JAMBONES_* flags given, by variable
	app        string
	parallel   int
	run        string
	asJSON     bool
	junit      string
	realTime   bool
	timeout    time.Duration
	idleLimit  time.Duration
	secret     string
	user, pass string
	strict     bool
}

func newTestCmd(c *cli) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test [DIR|FILE...]",
		Short: "Run scenario files against voice applications, like go test: one line per scenario, JSON and JUnit reports",
		Long: `Test runs scenario files (every *.yaml and *.yml of each DIR, default ./scenarios, and
each FILE) against the applications they name (app:), one simulated call each, up to
--parallel at a time, and prints one line per scenario as go test does: "ok" and its
time, or "FAIL" with the first expectation that did not hold and the timeline lines
around it; then a summary. A scenario passes when every expectation holds and its
call did not fail (unless it expects the failure: a reason, or a status other than
completed).

Every file is read and checked before any call is made: an unknown key, a value of the
wrong type, a malformed app URL exits with status 2, naming the file and the line.

--app URL points the scenarios elsewhere: a URL with only a scheme and a host
(http://ci-host:8080) moves every scenario's app there, keeping its path, its retry
fragment and its transport (an https or wss URL makes them secure); a URL with a path
replaces every scenario's app.

Exit status: 0 when every scenario passed, 1 when one failed, 2 for bad usage or a bad
scenario file.`,
		Example: "  switchboard demo --serve 127.0.0.1:3000 &\n" +
			"  switchboard test examples/scenarios\n" +
			"  switchboard test --run 'ws-' --junit report.xml examples/scenarios",
	}
	fl := cmd.Flags()
	fl.StringVar(&f.app, "app", "", "application URL for every scenario: an origin (http://host:port) moves each scenario's app there; a full URL replaces it")
	fl.IntVar(&f.parallel, "parallel", 4, "scenarios run at once")
	fl.StringVar(&f.run, "run", "", "run only the scenarios whose name matches this regular expression")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON event per line instead of text")
	fl.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to this file")
	fl.BoolVar(&f.realTime, "real-time", false, "run calls on the wall clock, as a node does")
	fl.DurationVar(&f.timeout, "timeout", time.Minute, "real-time limit for each scenario's call")
	fl.DurationVar(&f.idleLimit, "idle-limit", 10*time.Second, "how long a WebSocket call whose verbs ran out waits for a command")
	fl.StringVar(&f.secret, "secret", "", "webhook secret: sign HTTP hooks with Jambonz-Signature")
	fl.StringVar(&f.user, "username", "", "HTTP Basic auth username for the apps' hooks")
	fl.StringVar(&f.pass, "password", "", "HTTP Basic auth password for the apps' hooks")
	fl.BoolVar(&f.strict, "strict", false, "fail a scenario on a compat warning its expect.compat does not name (docs/compatibility.md)")
	withCallControlFlags(c, cmd, &f.network, func(cmd *cobra.Command, args []string) error {
		return runTest(cmd.Context(), c, f, args)
	})
	return cmd
}

// testScenario is one scenario file, read, checked and ready to run.
type testScenario struct {
	name string // the file's name without its extension
	file string
	sc   *scenario.Scenario
	app  string // after --app
	opts callctl.Options
	// strict: a compat warning the scenario does not name fails it (--strict).
	strict bool
}

// fileError is a problem of a scenario file, located as compilers do: FILE:LINE: msg.
type fileError struct {
	file string
	line int
	msg  string
}

func (e fileError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.file, e.msg)
}

func runTest(ctx context.Context, c *cli, f testFlags, args []string) error {
	switch {
	case f.parallel < 1:
		return usageError("--parallel must be at least 1")
	case f.timeout <= 0 || f.idleLimit <= 0:
		return usageError("--timeout and --idle-limit must be positive")
	case (f.user == "") != (f.pass == ""):
		return usageError("--username and --password go together")
	}
	var selected *regexp.Regexp
	if f.run != "" {
		var err error
		if selected, err = regexp.Compile(f.run); err != nil {
			return usageError("--run: %v", err)
		}
	}
	if f.app != "" {
		if err := scenario.CheckAppURL(f.app); err != nil {
			return usageError("--app: %v", err)
		}
	}
	files, err := scenarioFiles(args)
	if err != nil {
		return usageError("%v", err)
	}
	calls, err := newCLICallNetwork(c, f.network, f.parallel)
	if err != nil {
		return err
	}
	defer calls.CloseIdleConnections()
	// Every file is checked before anything runs: a suite with a broken file runs
	// nothing, so that CI never reports half a suite as passing.
	var all []*testScenario
	var errs []error
	names := map[string]string{}
	for _, file := range files {
		ts, err := loadTestScenario(file, f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := names[ts.name]; dup {
			errs = append(errs, fileError{file: file, msg: fmt.Sprintf("scenario name %q is also %s's: rename one", ts.name, other)})
			continue
		}
		names[ts.name] = file
		ts.opts = testCallOptions(calls.CallOptions(ts.app), ts, f)
		if err := ts.opts.Validate(); err != nil {
			errs = append(errs, fileError{file: file, msg: strings.ReplaceAll(err.Error(), "\n", "; ")})
			continue
		}
		all = append(all, ts)
	}
	if len(errs) > 0 {
		return usageError("%d bad scenario file(s), nothing was run:\n%v", len(errs), errors.Join(errs...))
	}
	var run []*testScenario
	for _, ts := range all {
		if selected == nil || selected.MatchString(ts.name) {
			run = append(run, ts)
		}
	}
	if len(run) == 0 {
		return usageError("no scenario matches --run %q (of %d)", f.run, len(all))
	}
	var junit *os.File
	if f.junit != "" {
		// Opened now, so that a report that cannot be written is known before the
		// calls are made.
		if junit, err = os.Create(f.junit); err != nil {
			return usageError("--junit: %v", err)
		}
		defer junit.Close()
	}
	rep := newTestReporter(c.stdout, f.asJSON, run)
	suite := runScenarios(ctx, run, f, rep)
	rep.summary(suite)
	if junit != nil {
		if err := writeJUnit(junit, suite); err != nil {
			return failure(fmt.Errorf("--junit: %w", err))
		}
	}
	switch {
	case ctx.Err() != nil:
		return failure(fmt.Errorf("interrupted: %w", ctx.Err()))
	case suite.failed > 0:
		return failure(fmt.Errorf("%d of %d scenario(s) failed", suite.failed, len(suite.outcomes)))
	}
	return nil
}

// scenarioFiles lists the files of args: each directory's *.yaml and *.yml files in
// name order, each file as given; ./scenarios without args.
func scenarioFiles(args []string) ([]string, error) {
	if len(args) == 0 {
		args = []string{defaultScenarioDir}
	}
	var files []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			if len(args) == 1 && a == defaultScenarioDir && errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("no ./%s directory: give the scenario directories or files to run", defaultScenarioDir)
			}
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := len(files)
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(a, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no scenario files (*.yaml, *.yml)", a)
		}
	}
	return files, nil
}

// loadTestScenario reads and checks one file, and settles its app under --app.
func loadTestScenario(file string, f testFlags) (*testScenario, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fileError{file: file, msg: err.Error()}
	}
	sc, err := scenario.Parse(src)
	if err != nil {
		var se *scenario.Error
		if errors.As(err, &se) {
			return nil, fileError{file: file, line: se.Line, msg: se.Msg}
		}
		return nil, fileError{file: file, msg: err.Error()}
	}
	ts := &testScenario{name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), file: file, sc: sc, strict: f.strict}
	if ts.app, err = appUnder(f.app, sc.App); err != nil {
		return nil, fileError{file: file, line: lineOfKey(src, "app"), msg: err.Error()}
	}
	if ts.app == "" {
		return nil, fileError{file: file, msg: "no app: name the application (app: http://127.0.0.1:3000/call), or give --app"}
	}
	if h := sc.StatusHook; h != "" && !strings.HasPrefix(h, "/") {
		if sc.StatusHook, err = appUnder(f.app, h); err != nil {
			return nil, fileError{file: file, line: lineOfKey(src, "status_hook"), msg: err.Error()}
		}
	}
	return ts, nil
}

// lineOfKey is the line of a top-level key in src, 0 when it is not found.
func lineOfKey(src []byte, key string) int {
	for i, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, key+":") {
			return i + 1
		}
	}
	return 0
}

// testCallOptions are the Options of one scenario's call.
func testCallOptions(o callctl.Options, ts *testScenario, f testFlags) callctl.Options {
	o.StatusHookURL = ts.sc.StatusHook
	o.Username, o.Password, o.Secret = f.user, f.pass, f.secret
	o.Call = callctl.CallInfo{From: ts.sc.From, To: ts.sc.To}
	o.Script = ts.sc.Script()
	o.IdleLimit = f.idleLimit
	o.RealTime = f.realTime
	o.EgressHint = egressHint
	return o
}

// appUnder is a scenario's app (or absolute status hook) under --app: flagApp with
// only a scheme and a host moves it there, keeping its path, query, fragment and
// transport (secure when flagApp is https or wss); a flagApp with more replaces it.
// Without --app it is the scenario's own.
func appUnder(flagApp, own string) (string, error) {
	if flagApp == "" {
		return own, nil
	}
	base, err := url.Parse(flagApp)
	if err != nil {
		return "", err
	}
	originOnly := (base.Path == "" || base.Path == "/") && base.RawQuery == "" && base.Fragment == "" && !strings.Contains(flagApp, "#")
	if !originOnly || own == "" {
		return flagApp, nil
	}
	u, err := url.Parse(own)
	if err != nil {
		return "", err
	}
	secure := base.Scheme == "https" || base.Scheme == "wss"
	webSocket := u.Scheme == "ws" || u.Scheme == "wss"
	u.Scheme = map[[2]bool]string{{false, false}: "http", {true, false}: "https", {false, true}: "ws", {true, true}: "wss"}[[2]bool{secure, webSocket}]
	u.Host = base.Host
	return u.String(), nil
}

// testSuite is what a run of scenarios did.
type testSuite struct {
	outcomes []*testOutcome // in the order of the files
	passed   int
	failed   int
	skipped  int // not run: the run was interrupted first
	elapsed  time.Duration
	started  time.Time
}

// testOutcome is one scenario's call and verdict.
type testOutcome struct {
	ts       *testScenario
	ran      bool
	result   *callctl.Result
	failures []scenario.Failure
	passed   bool
	elapsed  time.Duration
}

// judge decides whether a scenario passed: every expectation held, and the call did
// not fail unless the scenario expects it. A call that failed with every expectation
// holding fails as the expectation "call".
func judge(ts *testScenario, r *callctl.Result) ([]scenario.Failure, bool) {
	e := ts.sc.Expectations()
	failures := e.Evaluate(r)
	if ts.strict {
		failures = append(failures, e.Strict(r)...)
	}
	if len(failures) > 0 {
		return failures, false
	}
	if r.Failed() && !e.ExpectFailure() {
		at := slices.IndexFunc(r.Timeline, func(x callctl.Event) bool { return x.Kind == callctl.KindAlert })
		if at < 0 {
			at = len(r.Timeline) - 1
		}
		return []scenario.Failure{{Expectation: "call", Event: at, Message: fmt.Sprintf(
			"call: ended %s (%s), SIP %d; a scenario that expects this names its reason or status", r.Status, r.Reason, r.SIPStatus)}}, false
	}
	return nil, true
}
