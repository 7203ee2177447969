package main

import (
	"net"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/demo"
	"github.com/switchboard-voice/switchboard/featureserver"
)

func newDemoCmd(c *cli) *cobra.Command {
	var serveAddr string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the built-in example apps on loopback, simulate a call against each, and deliver a webhook through the outbox",
		Long: `Demo starts two small jambonz-style example applications on 127.0.0.1, one answering
HTTP webhooks and one speaking the WebSocket protocol, and simulates a call against
each: a greeting (say), a gather answered by the caller, the gather's action hook,
and a hangup. On the WebSocket call the node drops the connection mid-call, then
reconnects and resumes the session with session:reconnect. Both timelines are
printed. Then it delivers one call.status webhook through the outbox, on a SQLite file
in a temporary directory, to a receiver that fails twice before it answers 204: the
outbox is closed and opened again between attempts, and every attempt's Standard
Webhooks signature is checked. Nothing but this binary is needed.

With --serve ADDR it only runs the two example apps on ADDR, until interrupted, so
that you can point switchboard simulate at them (the examples/ scenarios expect
them): http://ADDR/call for HTTP webhooks, ws://ADDR/ws for the WebSocket app.`,
		Example: "  switchboard demo\n" +
			"  switchboard demo --serve 127.0.0.1:3000 &\n" +
			"  switchboard simulate http://127.0.0.1:3000/call --scenario examples/ivr.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if serveAddr != "" {
				ln, err := net.Listen("tcp", serveAddr)
				if err != nil {
					return usageError("--serve %s: %v", serveAddr, err)
				}
				if err := demo.ServeApps(cmd.Context(), ln, c.stdout); err != nil {
					return failure(err)
				}
				return nil
			}
			cfg, err := featureserver.LoadCallControlConfig(c.getenv)
			if err != nil {
				return usageError("%v", err)
			}
			if err := demo.Run(cmd.Context(), c.stdout, cfg, c.logger); err != nil {
				return failure(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&serveAddr, "serve", "", "only serve the example apps on this address (e.g. 127.0.0.1:3000) until interrupted")
	return cmd
}
