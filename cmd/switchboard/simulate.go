package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/fragment"
)

type simulateFlags struct {
	network     map[string]string // the JAMBONES_* flags given, by variable
	scenario    string
	caseName    string
	asJSON      bool
	from, to    string
	secret      string
	statusHook  string
	user, pass  string
	calls       int
	concurrency int
	timeout     time.Duration
	idleLimit   time.Duration
	realTime    bool
	strict      bool
}

func newSimulateCmd(c *cli) *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate [APP_URL]",
		Short: "Simulate inbound calls against a live jambonz-style application and print their timelines",
		Long: `Simulate places one inbound call (or --calls N) against the application at APP_URL
(http(s):// for webhooks, ws(s):// for a WebSocket, with an optional #rc=..&rp=.. retry
fragment; default: the app: of the --scenario file) and prints what happened: hook
attempts and retries, WebSocket messages, verbs, the caller's input, status changes,
alerts and how the call ended. Media is simulated on a simulated clock, so a long call
takes milliseconds (--real-time runs it on the wall clock, as a node would); the
network is real, and apps on loopback and private addresses are allowed, and those
SWITCHBOARD_EGRESS_ALLOW lists.

A --scenario file scripts the caller (input at each gather, dial outcomes, when to
hang up), injects faults (drop the WebSocket after the N-th message; latency, a slow
app, refused or reset connections) and states expectations. It is read as switchboard
test reads it: ${VAR} and ${VAR:-default} in any string read the environment, a file
that names no app: takes the app: of the switchboard-test.yaml beside it, and of a
file with several cases: --case NAME plays one. JAMBONES_* environment variables
configure timeouts and limits.

Exit status: 0 when every call ended as expected, 1 when a call failed or an
expectation did not hold, 2 for bad usage or a bad scenario file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			// cobra's "accepts at most 1 arg(s), received 2" did not say that the
			// second was most likely a scenario file given without --scenario.
			if len(args) > 1 {
				return usageError("simulate takes one APP_URL at most (got %d arguments); a scenario file goes after --scenario", len(args))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario file (YAML): caller input, dial outcomes, faults, expectations; read as switchboard test reads it")
	fl.StringVar(&f.caseName, "case", "", "with --scenario: the case to play of a file with several cases:")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object per line (timeline events, then a summary)")
	fl.StringVar(&f.from, "from", "", "caller number (default from the scenario, else +15551230000)")
	fl.StringVar(&f.to, "to", "", "called number (default from the scenario, else +15559870000)")
	fl.StringVar(&f.secret, "secret", "", "webhook secret: sign HTTP hooks with Jambonz-Signature")
	fl.StringVar(&f.statusHook, "status-hook", "", "status hook URL of an HTTP app (absolute or relative to APP_URL; default the scenario's status_hook)")
	fl.StringVar(&f.user, "username", "", "HTTP Basic auth username for the app's hooks")
	fl.StringVar(&f.pass, "password", "", "HTTP Basic auth password for the app's hooks")
	fl.IntVar(&f.calls, "calls", 1, "number of calls to simulate")
	fl.IntVar(&f.concurrency, "concurrency", 1, "calls in progress at once")
	fl.DurationVar(&f.timeout, "timeout", time.Minute, "real-time limit for each call")
	fl.DurationVar(&f.idleLimit, "idle-limit", 10*time.Second, "how long a WebSocket call whose verbs ran out waits for a command")
	fl.BoolVar(&f.realTime, "real-time", false, "run calls on the wall clock, as a node does: media, retry delays and backoff take their real time")
	fl.BoolVar(&f.strict, "strict", false, "count a call with a compat warning the scenario's expect.compat does not name as failed (docs/compatibility.md §2)")
	withCallControlFlags(c, cmd, &f.network, func(cmd *cobra.Command, args []string) error {
		appURL := ""
		if len(args) == 1 {
			appURL = args[0]
		}
		return runSimulate(cmd.Context(), c, f, appURL)
	})
	return cmd
}

func runSimulate(ctx context.Context, c *cli, f simulateFlags, appURL string) error {
	if f.calls < 1 || f.concurrency < 1 {
		return usageError("--calls and --concurrency must be at least 1")
	}
	if f.timeout <= 0 || f.idleLimit <= 0 {
		return usageError("--timeout and --idle-limit must be positive")
	}
	if (f.user == "") != (f.pass == "") {
		return usageError("--username and --password go together")
	}
	sc := &scenario.Scenario{}
	switch {
	case f.scenario != "":
		sf, err := apptest.ReadScenario(f.scenario, apptest.ReadOptions{Case: f.caseName, LookupEnv: envLookup(c), HaveApp: appURL != ""})
		if err != nil {
			return usageError("--scenario: %v", err)
		}
		if sf.Skip != "" {
			name := f.scenario
			if sf.Name != "" {
				name += " case " + sf.Name
			}
			fmt.Fprintf(c.stderr, "switchboard: %s is marked skip: %s (simulate plays it all the same)\n", name, sf.Skip)
		}
		sc = sf.Scenario
	case f.caseName != "":
		return usageError("--case goes with --scenario")
	}
	if appURL == "" {
		appURL = sc.App
	}
	if appURL == "" {
		return usageError("no APP_URL argument, and no app: in a --scenario file")
	}
	target, err := fragment.Parse(appURL)
	if errors.Is(err, fragment.ErrUserInfo) {
		return usageError("APP_URL: a URL with user:password@ (give credentials with --username and --password)")
	}
	if err != nil {
		return usageError("APP_URL: %v", err)
	}
	for _, w := range target.Policy.Warnings {
		c.logger.Warn().Str("url", appURL).Msg(w)
	}
	calls, err := newCLICallNetwork(c, f.network, f.concurrency)
	if err != nil {
		return err
	}
	defer calls.CloseIdleConnections()
	o := simulation.Options{AppURL: appURL, Scenario: sc, From: f.from, To: f.to, Secret: f.secret, StatusHook: f.statusHook,
		Username: f.user, Password: f.pass, Calls: f.calls, Concurrency: f.concurrency, Timeout: f.timeout,
		IdleLimit: f.idleLimit, RealTime: f.realTime, Strict: f.strict, JSON: f.asJSON}
	if isTerminal(c.stderr) {
		o.Progress = c.stderr
	}
	s, err := simulation.New(o, calls, c.stdout)
	if err != nil {
		return usageError("%v", err)
	}
	if err := s.Run(ctx); err != nil {
		return failure(err)
	}
	return nil
}

// newCLICallNetwork is the network of the calls of one `simulate` or `test` run
// (simulation.Network), with overrides, the JAMBONES_* flags given
// (envFlags.overrides), winning over the environment.
func newCLICallNetwork(c *cli, overrides map[string]string, concurrency int) (*featureserver.CallNetwork, error) {
	calls, err := simulation.Network(withOverrides(c.getenv, overrides), concurrency, c.logger)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return calls, nil
}
