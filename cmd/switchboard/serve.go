package main

import (
	"errors"
	"fmt"
	"net"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/featureserver"
)

func init() { extraCommands = append(extraCommands, newServeCmd) }

// serveFlags maps each configuration flag of `serve` to the variable it overrides.
var serveFlags = []struct{ flag, env, usage string }{
	{"listen", featureserver.EnvListen, "API address host:port (default 127.0.0.1:8080)"},
	{"database-url", featureserver.EnvDatabaseURL, "database: sqlite:PATH, or postgres://... shared by several nodes (default sqlite:switchboard.db)"},
	{"node-id", featureserver.EnvNodeID, "this node's id among nodes sharing a database, stable across restarts (default host name-process id)"},
	{"node-url", featureserver.EnvNodeURL, "where the other nodes reach this node's API (default http:// and the listen address)"},
	{"node-lease-ms", featureserver.EnvNodeLease, "how long the node's lease on its calls lasts unrenewed (default 15000)"},
	{"drain-timeout-ms", featureserver.EnvDrainTimeout, "on SIGTERM, how long active calls may finish (default 30000)"},
	{"egress-allow", featureserver.EnvEgressAllow, "comma-separated CIDRs and host names hooks may reach beyond the default rules"},
	{"egress-deny-hosts", featureserver.EnvEgressDeny, "comma-separated host names and .suffixes no hook or webhook may reach"},
	{"smtp-url", featureserver.EnvSMTPURL, "SMTP server that e-mails webhook endpoint notices: smtp://host:port[?from=address]"},
	{"outbox-lease-ms", featureserver.EnvOutboxLease, "how long a claim holds a delivery before another node may attempt it again (default 120000)"},
	{"admin-token", featureserver.EnvAdminToken, "bearer token allowed to create accounts through the API"},
	{"call-idle-timeout-ms", featureserver.EnvCallIdle, "end a WebSocket call idle this long after its verbs ran out (default 300000)"},
	{"max-calls", featureserver.EnvMaxCalls, "most concurrent calls (default 10000)"},
	{"max-call-duration-ms", featureserver.EnvMaxCallDuration, "end a call that lasted this long, reason max-duration (default 14400000: 4 h)"},
	{"max-call-requests", featureserver.EnvMaxCallRequests, "end a call that sent its app this many requests, reason max-requests (default 1000)"},
	{"max-call-events", featureserver.EnvMaxCallEvents, "end a call whose timeline reached this many events, reason max-events (default 5000)"},
	{"http-timeout-ms", "JAMBONES_HTTP_TIMEOUT", "HTTP hook timeout, connect + response headers (default 10000)"},
	{"http-user-agent", "JAMBONES_HTTP_USER_AGENT_HEADER", "User-Agent of hooks and WebSocket upgrades (default jambonz)"},
	{"ws-handshake-timeout-ms", "JAMBONES_WS_HANDSHAKE_TIMEOUT_MS", "WebSocket opening handshake timeout (default 1500)"},
	{"ws-ack-timeout-ms", "JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT", "wait for a WebSocket ack (default 5000)"},
	{"ws-max-payload", "JAMBONES_WS_MAX_PAYLOAD", "largest inbound WebSocket message in bytes (default 24576)"},
	{"ws-ping-interval-ms", "JAMBONES_WS_PING_INTERVAL_MS", "WebSocket keepalive ping interval, 0 = off (default 0)"},
	{"webhook-error-return", "JAMBONES_WEBHOOK_ERROR_RETURN", "SIP status when the initial hook fails (default 480)"},
}

func newServeCmd(c *cli) *cobra.Command {
	var (
		printConfig bool
		bootstrap   string
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
			for _, f := range serveFlags {
				if cmd.Flags().Changed(f.flag) {
					overrides[f.env], _ = cmd.Flags().GetString(f.flag)
				}
			}
			if lf := cmd.Flags().Lookup("log-level"); lf != nil && lf.Changed {
				overrides[featureserver.EnvLogLevel] = lf.Value.String()
			}
			cfg, err := featureserver.LoadConfig(c.getenv, overrides)
			var bad *featureserver.ConfigError
			if errors.As(err, &bad) {
				for _, f := range serveFlags {
					if f.env == bad.Name && cmd.Flags().Changed(f.flag) {
						// The value came from the flag: name the flag, not its variable.
						return usageError("--%s=%q is invalid: want %s", f.flag, bad.Value, bad.Accept)
					}
				}
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
	for _, f := range serveFlags {
		cmd.Flags().String(f.flag, "", f.usage+" ["+f.env+"]")
	}
	cmd.Flags().BoolVar(&printConfig, "print-config", false, "print the effective configuration (secrets masked) and exit")
	cmd.Flags().StringVar(&bootstrap, "bootstrap", "", "YAML file of accounts and applications to create or update at start")
	return cmd
}
