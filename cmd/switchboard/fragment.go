package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/fragment"
)

func newFragmentCmd(c *cli) *cobra.Command {
	cmd := groupCommand("fragment", "Work with the #rc=..&rp=.. retry fragment of application URLs")
	cmd.AddCommand(newFragmentExplainCmd(c))
	return cmd
}

// fragmentFlags are the call-control flags that fragment explain reads: the connect
// timeouts that each attempt against a silent host costs.
var fragmentFlags = func() []envFlag {
	var out []envFlag
	for _, f := range callControlFlags {
		if f.name == "http-timeout" || f.name == "ws-handshake-timeout" {
			out = append(out, f)
		}
	}
	return out
}()

func newFragmentExplainCmd(c *cli) *cobra.Command {
	var (
		asJSON bool
		flags  *envFlags
	)
	cmd := &cobra.Command{
		Use:   "explain URL",
		Short: "Show a URL's retry policy, its delays and its time to failure against an unreachable host",
		Long: `Explain parses the retry fragment of an application or hook URL and shows the
transport, rc, rp, whether WebSocket handshake timeouts are retried, the delay before
each retry, and the time to give up on a host that silently drops connection attempts.

Each attempt against such a host costs the connect timeout: JAMBONES_HTTP_TIMEOUT
(default 10000 ms) for HTTP, JAMBONES_WS_HANDSHAKE_TIMEOUT_MS (default 1500 ms) for
WebSocket. The flags override the environment.`,
		Example: "  switchboard fragment explain 'wss://app.example.com/ws#rc=5&rp=ct'\n" +
			"  switchboard fragment explain --json 'https://app.example.com/call#rc=2&rp=5xx,ct'",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("fragment explain takes exactly one URL (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// The flags are serve's (durations, a bare number is milliseconds, the -ms
			// spellings hidden): load checks them in the variables' ranges and names
			// the flag as given in an error.
			overrides, err := flags.load(c.getenv)
			if err != nil {
				return err
			}
			cfg, err := featureserver.LoadCallControlConfig(withOverrides(c.getenv, overrides))
			if err != nil {
				return usageError("%v", oneLine(err))
			}
			timeouts := fragment.Timeouts{HTTP: cfg.HTTPTimeout, WSHandshake: cfg.WSHandshakeTimeout}
			target, err := fragment.Parse(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			// Each warning is printed once, in the explanation (its warning rows, or
			// the JSON's warnings): not logged beside it as well.
			e := fragment.Explain(target, timeouts)
			if asJSON {
				enc := json.NewEncoder(c.stdout)
				enc.SetEscapeHTML(false)
				return enc.Encode(e) // fragment.Explanation.MarshalJSON: the stable contract
			}
			return printExplanation(c, e)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	flags = addEnvFlags(cmd.Flags(), fragmentFlags)
	return cmd
}

func printExplanation(c *cli, e fragment.Explanation) error {
	p := e.Target.Policy
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
	row("url", e.Target.Clean())
	row("transport", string(p.Transport))
	rc := fmt.Sprint(p.RetryCount)
	if p.RetryCountDefault {
		rc += " (default)"
	}
	row("retries (rc)", rc)
	rp := make([]string, len(p.RetryOn))
	for i, class := range p.RetryOn {
		rp[i] = string(class)
	}
	retriedOn := strings.Join(rp, ",")
	if !p.RetryOnExplicit {
		retriedOn += " (default)"
	}
	row("retried on (rp)", retriedOn)
	if p.Transport == fragment.WebSocket {
		row("handshake timeouts", map[bool]string{true: "retried", false: "not retried"}[p.RetriesHandshakeTimeout()])
	}
	row("attempts", fmt.Sprintf("%d at most", p.MaxAttempts()))
	row("delays", formatDelays(e.Delays, e.TotalDelay))
	row("time to failure", fmt.Sprintf("%s (%d attempt(s) × %s timeout + delays, host dropping connects)",
		e.TimeToFailure, e.AttemptsToFailure, e.AttemptTimeout))
	if len(e.Target.IgnoredKeys) > 0 {
		row("ignored keys", strings.Join(e.Target.IgnoredKeys, ", "))
	}
	for _, warning := range p.Warnings {
		row("warning", warning)
	}
	return w.Flush()
}

func formatDelays(delays []time.Duration, total time.Duration) string {
	if len(delays) == 0 {
		return "none"
	}
	parts := make([]string, len(delays))
	for i, d := range delays {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s (total %s)", strings.Join(parts, ", "), total)
}

// oneLine joins a multi-error into one line for a usage message.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
