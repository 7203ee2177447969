package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/suite"
)

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
	fl.BoolVar(&f.strict, "strict", false, "fail a scenario on a compat warning its expect.compat does not name (docs/compatibility.md §2)")
	withCallControlFlags(c, cmd, &f.network, func(cmd *cobra.Command, args []string) error {
		return runTest(cmd.Context(), c, f, args)
	})
	return cmd
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
	files, err := suite.Files(args)
	if err != nil {
		return usageError("%v", err)
	}
	calls, err := newCLICallNetwork(c, f.network, f.parallel)
	if err != nil {
		return err
	}
	defer calls.CloseIdleConnections()
	all, err := suite.Load(files, suite.Config{App: f.app, Network: calls, Secret: f.secret, Username: f.user, Password: f.pass,
		IdleLimit: f.idleLimit, RealTime: f.realTime, Strict: f.strict})
	if err != nil {
		return usageError("%v", err)
	}
	run := suite.Select(all, selected)
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
	rep := suite.NewReporter(c.stdout, f.asJSON, run)
	res := suite.Run(ctx, run, f.parallel, f.timeout, rep)
	rep.Summary(res)
	if junit != nil {
		if err := suite.WriteJUnit(junit, res); err != nil {
			return failure(fmt.Errorf("--junit: %w", err))
		}
	}
	switch {
	case ctx.Err() != nil:
		return failure(fmt.Errorf("interrupted: %w", ctx.Err()))
	case res.Failed > 0:
		return failure(fmt.Errorf("%d of %d scenario(s) failed", res.Failed, len(res.Outcomes)))
	}
	return nil
}
