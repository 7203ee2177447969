package main

import (
	"fmt"
	"net"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/featureserver"
)

// serveFlags are the node's settings as flags, each standing for its variable;
// the JAMBONES_* ones follow (callControlFlags).
var serveFlags = append([]envFlag{
	{name: "listen", env: featureserver.EnvListen, usage: "API address host:port (default 127.0.0.1:8080)"},
	{name: "database-url", env: featureserver.EnvDatabaseURL, usage: "database: sqlite:PATH, or postgres://... shared by several nodes (default sqlite:switchboard.db)"},
	{name: "node-id", env: featureserver.EnvNodeID, usage: "this node's id among nodes sharing a database, stable across restarts (default host name-process id)"},
	{name: "node-url", env: featureserver.EnvNodeURL, usage: "where the other nodes reach this node's API (default http:// and the listen address)"},
	{name: "node-lease", env: featureserver.EnvNodeLease, usage: "how long the node's lease on its calls lasts unrenewed (default 15s)", kind: kindDuration, legacy: "node-lease-ms"},
	{name: "drain-timeout", env: featureserver.EnvDrainTimeout, usage: "on SIGTERM, how long active calls may finish (default 30s)", kind: kindDuration, legacy: "drain-timeout-ms"},
	{name: "egress-allow", env: featureserver.EnvEgressAllow, usage: "comma-separated CIDRs and host names call-control hooks may reach beyond the default rules"},
	{name: "outbox-egress-allow", env: featureserver.EnvOutboxEgressAllow, usage: "comma-separated CIDRs and host names webhook endpoints and notice URLs may reach beyond public addresses"},
	{name: "egress-deny-hosts", env: featureserver.EnvEgressDeny, usage: "comma-separated host names and .suffixes no hook or webhook may reach"},
	{name: "smtp-url", env: featureserver.EnvSMTPURL, usage: "SMTP server that e-mails webhook endpoint notices: smtp://host:port[?from=address]"},
	{name: "outbox-lease", env: featureserver.EnvOutboxLease, usage: "how long a claim holds a delivery before another node may attempt it again (default 2m)", kind: kindDuration, legacy: "outbox-lease-ms"},
	{name: "egress-proxy", env: featureserver.EnvEgressProxy, usage: "HTTP CONNECT proxy every webhook delivery goes through, for a static source address: http://[user:password@]host:port"},
	{name: "admin-token", env: featureserver.EnvAdminToken, usage: "bearer token allowed to administer accounts through the API (at least 32 characters)"},
	{name: "trusted-proxies", env: featureserver.EnvTrustedProxies, usage: "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (limits on failed authentication)"},
	{name: "call-idle-timeout", env: featureserver.EnvCallIdle, usage: "end a WebSocket call idle this long after its verbs ran out (default 5m)", kind: kindDuration, legacy: "call-idle-timeout-ms"},
	{name: "max-calls", env: featureserver.EnvMaxCalls, usage: "most concurrent calls (default 10000)", kind: kindInt},
	{name: "max-call-duration", env: featureserver.EnvMaxCallDuration, usage: "end a call that lasted this long, reason max-duration (default 4h)", kind: kindDuration, legacy: "max-call-duration-ms"},
	{name: "max-call-requests", env: featureserver.EnvMaxCallRequests, usage: "end a call that sent its app this many requests, reason max-requests (default 1000)", kind: kindInt},
	{name: "max-call-events", env: featureserver.EnvMaxCallEvents, usage: "end a call whose timeline reached this many events, reason max-events (default 5000)", kind: kindInt},
	{name: "call-retention", env: featureserver.EnvRetention, usage: "keep the records of ended calls this long, whole hours (default 168h: 7 days)", kind: kindHours},
}, callControlFlags...)

func newServeCmd(c *cli) *cobra.Command {
	var (
		printConfig bool
		bootstrap   string
		flags       *envFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a feature-server node: REST API, calls, metrics",
		Long: `Serve runs a Switchboard node. Calls are started through the REST API
(/v1/Accounts/{account}/Calls) and run against their applications; their state,
timelines and alerts are read back through the API. /metrics serves Prometheus
metrics, /healthz and /readyz health. SIGTERM drains: no new calls, active calls
finish up to the drain timeout, then the rest are ended with reason node-shutdown.

Every setting comes from an environment variable or the flag of the same meaning
(flags win). A bad value stops the node at start with a message naming it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			overrides := map[string]string{}
			if err := flags.overrides(overrides); err != nil {
				return err
			}
			if lf := cmd.Flags().Lookup("log-level"); lf != nil && lf.Changed {
				overrides[featureserver.EnvLogLevel] = lf.Value.String()
			}
			cfg, err := featureserver.LoadConfig(c.getenv, overrides)
			if ferr := flags.flagError(err); ferr != nil {
				return ferr // the value came from the flag: name the flag, not its variable
			}
			if err != nil {
				return usageError("%s", oneLine(err))
			}
			if printConfig {
				w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
				for _, kv := range cfg.Printable() {
					fmt.Fprintf(w, "%s\t%s\n", kv[0], kv[1])
				}
				return w.Flush()
			}
			var boot *featureserver.Bootstrap
			if bootstrap != "" {
				if boot, err = featureserver.LoadBootstrap(bootstrap); err != nil {
					return usageError("%s", oneLine(err))
				}
			}
			log := newLogger(c.stderr, cfg.LogLevel)
			node, err := featureserver.NewNode(cmd.Context(), cfg, featureserver.NodeOptions{
				Version: buildVersion(), Bootstrap: boot, Logger: log})
			if err != nil {
				return failure(err)
			}
			err = node.Run(cmd.Context(), func(addr net.Addr) {
				// One machine-readable line on stdout tells scripts and tests where the
				// node listens (useful with --listen 127.0.0.1:0).
				fmt.Fprintf(c.stdout, "listening on http://%s\n", addr)
			})
			if err != nil {
				return failure(err)
			}
			return nil
		},
	}
	flags = addEnvFlags(cmd.Flags(), serveFlags)
	cmd.Flags().BoolVar(&printConfig, "print-config", false, "print the effective configuration (secrets masked) and exit")
	cmd.Flags().StringVar(&bootstrap, "bootstrap", "", "YAML file of accounts and applications to create or update at start")
	return cmd
}
