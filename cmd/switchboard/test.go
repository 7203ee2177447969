package main

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
)

type testFlags struct {
	run        apptest.Config
	network    map[string]string // the JAMBONES_* flags given, by variable
	realTime   bool
	idleLimit  time.Duration
	secret     string
	user, pass string
}

func newTestCmd(c *cli) *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test [DIR|FILE...]",
		Short: "Run scenario files against voice applications, like go test: one line per scenario, JSON and JUnit reports",
		Long: `Test runs scenario files (every *.yaml and *.yml of each DIR, default ./scenarios, and
each FILE) against the applications they name (app:), one simulated call each, up to
--parallel at a time, and prints one line per scenario as go test does: "ok" and its
time, "FAIL" with the first expectation that did not hold and the timeline lines
around it, "ERROR" with the reason its app could not be reached, or "SKIP" with the
reason its file gives (skip:); then a summary. A scenario passes when every
expectation holds and its call did not fail (unless it expects the failure: a
reason, or a status other than completed). A file with cases: holds several
scenarios, named FILE/CASE, sharing the file's keys. ${VAR} and ${VAR:-default} in
any string of a file read the environment.

Every file is read and checked before any call is made: an unknown key, a value of the
wrong type, a malformed app URL, a variable not set exits with status 2, naming the
file and the line.

--app URL points the scenarios elsewhere: a URL with only a scheme and a host
(http://ci-host:8080) moves every scenario's app there, keeping its path, its retry
fragment and its transport (an https or wss URL makes them secure); a URL with a path
replaces every scenario's app.

--count N runs each scenario N times; it passes when every run passes, or with
--pass-rate R when at least that share of its runs pass (for apps that answer
differently run to run).

--start "CMD" (or start: in a folder's switchboard-test.yaml) starts the app under
test in a process group of its own, waits until the addresses of its scenarios' apps
accept connections (--start-timeout; its output is shown when it does not), runs the
scenarios and stops the group: "switchboard test --start 'npm start' tests/" is a
whole CI step. "switchboard" in the command is this binary.

--watch runs the scenarios again whenever a scenario file changes (that file's
scenarios), or the app's files (--start: the current directory; start: its dir or the
folder's watch:), restarting the app first; Ctrl-C ends it.

Snapshots: --update records what each scenario's call did (verbs, hooks, the requests
the app received with the payload fields its snapshot: key chooses, alerts, compat
warnings) in NAME.snap.yaml beside NAME.yaml; later runs compare each call with it and print
a diff when it changed. Ids, addresses and timestamps are masked.

A compat warning (where the call did what jambonz does and that would silently hurt
the app) that a scenario's expect.compat does not name is told under its verdict;
--strict fails the scenario on it.

Logs never mix with the report: -v prints each scenario's timeline and logs,
--log-file FILE keeps every log line.

Exit status: 0 when every scenario passed, 1 when one failed or could not reach its
app, 2 for bad usage or a bad scenario file. docs/testing.md has the whole guide.`,
		Example: "  switchboard test examples/scenarios           # its switchboard-test.yaml starts the example apps\n" +
			"  switchboard test --start 'npm start' --junit report.xml tests/\n" +
			"  switchboard test --update scenarios/ && git diff scenarios/\n" +
			"  switchboard test --run 'ws-' --junit report.xml examples/scenarios\n" +
			"  switchboard test --count 10 --pass-rate 0.9 -v scenarios/agent.yaml",
	}
	fl := cmd.Flags()
	r := &f.run
	fl.StringVar(&r.App, "app", "", "application URL for every scenario: an origin (http://host:port) moves each scenario's app there; a full URL replaces it")
	fl.IntVar(&r.Parallel, "parallel", 4, "calls run at once")
	fl.StringVar(&r.Run, "run", "", "run only the scenarios whose name (FILE or FILE/CASE) matches this regular expression")
	fl.IntVar(&r.Count, "count", 1, "run each scenario this many times")
	fl.Float64Var(&r.PassRate, "pass-rate", 0, "with --count: pass a scenario when at least this share of its runs pass (0.9: 9 in 10); default every run")
	fl.BoolVar(&r.FailFast, "fail-fast", false, "start no scenario once one has failed")
	fl.BoolVar(&r.List, "list", false, "list the scenarios selected, run nothing")
	fl.BoolVarP(&r.Verbose, "verbose", "v", false, "print every scenario's timeline and logs")
	fl.BoolVar(&r.JSON, "json", false, "print one JSON event per line instead of text")
	fl.StringVar(&r.JUnit, "junit", "", "also write a JUnit XML report to this file")
	fl.StringVar(&r.Start, "start", "", `shell command that starts the app under test ("npm start"): run before the scenarios, waited for until the apps' addresses accept connections, stopped after`)
	fl.BoolVar(&r.NoStart, "no-start", false, "do not run the folders' start: (the apps already run)")
	fl.DurationVar(&r.StartTimeout, "start-timeout", time.Minute, "how long a started app may take to accept connections")
	fl.BoolVar(&r.Watch, "watch", false, "run the scenarios again whenever their files or their app's files change, until Ctrl-C")
	fl.BoolVar(&r.Strict, "strict", false, "fail a scenario on a compat warning its expect.compat does not name (docs/compatibility.md §2)")
	fl.BoolVar(&r.Update, "update", false, "record each scenario's call as its snapshot (NAME.snap.yaml beside NAME.yaml) instead of comparing with it")
	fl.StringVar(&r.LogFile, "log-file", "", "append every log line (JSON) to this file")
	fl.DurationVar(&r.Timeout, "timeout", time.Minute, "real-time limit for each scenario's call")
	fl.BoolVar(&f.realTime, "real-time", false, "run calls on the wall clock, as a node does")
	fl.DurationVar(&f.idleLimit, "idle-limit", 10*time.Second, "how long a WebSocket call whose verbs ran out waits for a command")
	fl.StringVar(&f.secret, "secret", "", "webhook secret: sign HTTP hooks with Jambonz-Signature")
	fl.StringVar(&f.user, "username", "", "HTTP Basic auth username for the apps' hooks")
	fl.StringVar(&f.pass, "password", "", "HTTP Basic auth password for the apps' hooks")
	withCallControlFlags(c, cmd, &f.network, func(cmd *cobra.Command, args []string) error {
		return runTest(cmd.Context(), c, f, args)
	})
	return cmd
}

func runTest(ctx context.Context, c *cli, f testFlags, args []string) error {
	switch {
	// 0 would mean the default to apptest: given, it is a mistake.
	case f.run.Parallel < 1 || f.run.Count < 1:
		return usageError("--parallel and --count must be at least 1")
	case f.idleLimit <= 0 || f.run.Timeout <= 0 || f.run.StartTimeout <= 0:
		return usageError("--timeout, --idle-limit and --start-timeout must be positive")
	case (f.user == "") != (f.pass == ""):
		return usageError("--username and --password go together")
	}
	// The calls log through the runner (each run's own logger); the network's
	// logger stays quiet so that nothing reaches stderr beside the report.
	quiet := *c
	quiet.logger = zerolog.Nop()
	calls, err := newCLICallNetwork(&quiet, f.network, f.run.Parallel)
	if err != nil {
		return err
	}
	defer calls.CloseIdleConnections()
	cfg := f.run
	cfg.Paths = args
	cfg.CallOptions = func(app string) callctl.Options {
		o := calls.CallOptions(app)
		o.Username, o.Password, o.Secret = f.user, f.pass, f.secret
		o.IdleLimit, o.RealTime, o.EgressHint = f.idleLimit, f.realTime, simulation.EgressHint
		return o
	}
	_, flagged := f.network["JAMBONES_WS_HANDSHAKE_TIMEOUT_MS"]
	cfg.HandshakeTimeoutGiven = flagged || c.getenv("JAMBONES_WS_HANDSHAKE_TIMEOUT_MS") != ""
	cfg.LookupEnv = envLookup(c)
	cfg.LogLevel = c.logger.GetLevel()
	cfg.Stdout, cfg.Stderr = c.stdout, c.stderr
	switch err := apptest.Run(ctx, cfg); {
	case errors.Is(err, apptest.ErrUsage):
		return usageError("%v", err)
	case err != nil:
		return failure(err)
	}
	return nil
}

// envLookup resolves the ${VAR} references of scenario files (docs/testing.md §1)
// in c's environment. A variable set to the empty string counts as unset: ${HOST}
// must name a host.
func envLookup(c *cli) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v := c.getenv(name)
		return v, v != ""
	}
}
