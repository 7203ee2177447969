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

// explainJSON is the stable --json contract of `fragment explain`.
type explainJSON struct {
	URL                     string   `json:"url"`
	CleanURL                string   `json:"clean_url"`
	Transport               string   `json:"transport"`
	RC                      int      `json:"rc"`
	RCDefault               bool     `json:"rc_default"`
	RP                      []string `json:"rp"`
	RPExplicit              bool     `json:"rp_explicit"`
	HandshakeTimeoutRetried bool     `json:"handshake_timeout_retried"`
	MaxAttempts             int      `json:"max_attempts"`
	DelaysMS                []int64  `json:"delays_ms"`
	TotalDelayMS            int64    `json:"total_delay_ms"`
	AttemptTimeoutMS        int64    `json:"attempt_timeout_ms"`
	AttemptsToFailure       int      `json:"attempts_to_failure"`
	TimeToFailureMS         int64    `json:"time_to_failure_ms"`
	IgnoredKeys             []string `json:"ignored_keys"`
	Warnings                []string `json:"warnings"`
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
				return enc.Encode(toExplainJSON(e))
			}
			return printExplanation(c, e)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	flags = addEnvFlags(cmd.Flags(), fragmentFlags)
	return cmd
}

func toExplainJSON(e fragment.Explanation) explainJSON {
	p := e.Target.Policy
	out := explainJSON{
		URL:                     e.Target.Raw,
		CleanURL:                e.Target.Clean(),
		Transport:               string(p.Transport),
		RC:                      p.RetryCount,
		RCDefault:               p.RetryCountDefault,
		RP:                      make([]string, len(p.RetryOn)),
		RPExplicit:              p.RetryOnExplicit,
		HandshakeTimeoutRetried: p.RetriesHandshakeTimeout(),
		MaxAttempts:             p.MaxAttempts(),
		DelaysMS:                make([]int64, len(e.Delays)),
		TotalDelayMS:            e.TotalDelay.Milliseconds(),
		AttemptTimeoutMS:        e.AttemptTimeout.Milliseconds(),
		AttemptsToFailure:       e.AttemptsToFailure,
		TimeToFailureMS:         e.TimeToFailure.Milliseconds(),
		IgnoredKeys:             append([]string{}, e.Target.IgnoredKeys...),
		Warnings:                append([]string{}, p.Warnings...),
	}
	for i, c := range p.RetryOn {
		out.RP[i] = string(c)
	}
	for i, d := range e.Delays {
		out.DelaysMS[i] = d.Milliseconds()
	}
	return out
}

func printExplanation(c *cli, e fragment.Explanation) error {
	j := toExplainJSON(e)
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(w, "%s\t%s\n", k, v) }
	row("url", j.CleanURL)
	row("transport", j.Transport)
	rc := fmt.Sprint(j.RC)
	if j.RCDefault {
		rc += " (default)"
	}
	row("retries (rc)", rc)
	rp := strings.Join(j.RP, ",")
	if !j.RPExplicit {
		rp += " (default)"
	}
	row("retried on (rp)", rp)
	if j.Transport == string(fragment.WebSocket) {
		row("handshake timeouts", map[bool]string{true: "retried", false: "not retried"}[j.HandshakeTimeoutRetried])
	}
	row("attempts", fmt.Sprintf("%d at most", j.MaxAttempts))
	row("delays", formatDelays(e.Delays, e.TotalDelay))
	row("time to failure", fmt.Sprintf("%s (%d attempt(s) × %s timeout + delays, host dropping connects)",
		e.TimeToFailure, e.AttemptsToFailure, e.AttemptTimeout))
	if len(j.IgnoredKeys) > 0 {
		row("ignored keys", strings.Join(j.IgnoredKeys, ", "))
	}
	for _, warning := range j.Warnings {
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
