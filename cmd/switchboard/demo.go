package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/transport"
)

func init() { extraCommands = append(extraCommands, newDemoCmd) }

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
				return serveExampleApps(cmd.Context(), c, serveAddr)
			}
			return runDemo(cmd.Context(), c)
		},
	}
	cmd.Flags().StringVar(&serveAddr, "serve", "", "only serve the example apps on this address (e.g. 127.0.0.1:3000) until interrupted")
	return cmd
}

// serveExampleApps runs the example HTTP app (/call, /gather, /status) and WebSocket
// app (/ws) on addr until ctx ends.
func serveExampleApps(ctx context.Context, c *cli, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError("--serve %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", &exampleapp.WSApp{})
	mux.Handle("/", &exampleapp.HTTPApp{})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(c.stdout, "example apps listening (Ctrl-C to stop):\n  HTTP webhooks  http://%[1]s/call\n  WebSocket      ws://%[1]s/ws\n", ln.Addr())
	select {
	case err := <-done:
		return failure(err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if srv.Shutdown(shutdown) != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}

// demoCall is one call of the demo and what makes it a success.
type demoCall struct {
	title, story string
	url          string
	flags        simulateFlags
	scenario     scenario.Scenario
	check        func(*callctl.Result) error
}

func runDemo(ctx context.Context, c *cli) error {
	cfg, err := featureserver.LoadCallControlConfig(c.getenv)
	if err != nil {
		return usageError("%v", err)
	}
	const secret = "demo-secret"
	httpURL, stopHTTP, err := serveLoopback(&exampleapp.HTTPApp{Secret: secret})
	if err != nil {
		return failure(err)
	}
	defer stopHTTP()
	wsApp := &exampleapp.WSApp{}
	wsURL, stopWS, err := serveLoopback(wsApp)
	if err != nil {
		return failure(err)
	}
	defer stopWS()

	calls := []demoCall{{
		title: "HTTP webhook app", url: httpURL + "/call",
		story: "The caller presses 1 at the gather. Hooks are signed (Jambonz-Signature) and status\nnotifications go to /status.",
		flags: simulateFlags{secret: secret, statusHook: "/status"},
		scenario: scenario.Scenario{Caller: scenario.Caller{Gathers: []scenario.Gather{{Digits: "1"}}},
			Expect: scenario.Expectations{Verbs: []string{"say", "gather", "say", "pause", "say", "hangup"}, Hooks: []string{"/call", "/gather"}, Status: callctl.StatusCompleted}},
	}, {
		title: "WebSocket app", url: "ws" + httpURLTail(wsURL) + "/ws#rc=3",
		story: "The caller says \"support please\". After the 6th message the node drops the socket\n(close 1011): it reconnects and resumes the session with session:reconnect.",
		scenario: scenario.Scenario{
			Caller: scenario.Caller{Gathers: []scenario.Gather{{Speech: "support please"}}},
			Faults: []callctl.Fault{{AfterMessage: 6, CloseCode: 1011}},
			Expect: scenario.Expectations{Verbs: []string{"say", "gather", "say", "pause", "say", "hangup"}, Hooks: []string{"/ws", "/gather"}, Status: callctl.StatusCompleted},
		},
		check: func(r *callctl.Result) error {
			if !slices.ContainsFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindWSReconnect }) {
				return errors.New("no reconnect happened")
			}
			return nil
		},
	}}
	fmt.Fprintln(c.stdout, "Switchboard demo: two example apps on loopback, one simulated call each, then one\nwebhook delivered through the outbox on SQLite.")
	var failed []string
	for _, dc := range calls {
		if err := runDemoCall(ctx, c, cfg, dc); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", dc.title, err))
		}
	}
	if err := runOutboxDemo(ctx, c); err != nil {
		failed = append(failed, fmt.Sprintf("webhook outbox: %v", err))
	}
	if len(failed) > 0 {
		return failure(errors.New(joinLines(failed)))
	}
	fmt.Fprintln(c.stdout, "\nNext: run the example apps with `switchboard demo --serve 127.0.0.1:3000` and simulate calls\nagainst them (or your own app), e.g.\n  switchboard simulate http://127.0.0.1:3000/call --scenario examples/ivr.yaml")
	return nil
}

func runDemoCall(ctx context.Context, c *cli, cfg featureserver.CallControlConfig, dc demoCall) error {
	fmt.Fprintf(c.stdout, "\n── %s  %s\n%s\n\n", dc.title, dc.url, dc.story)
	dc.flags.calls, dc.flags.concurrency, dc.flags.timeout, dc.flags.idleLimit = 1, 1, 20*time.Second, 5*time.Second
	calls := featureserver.NewCallNetwork(cfg, transport.CallControlRules(true), c.logger)
	defer calls.CloseIdleConnections()
	s := newSimulation(c, dc.flags, calls, dc.url, &dc.scenario)
	o := s.base
	o.OnEvent = func(e callctl.Event) { fmt.Fprintln(c.stdout, e.String()) }
	ctx, cancel := context.WithTimeout(ctx, dc.flags.timeout)
	defer cancel()
	start := time.Now()
	r, err := callctl.Run(ctx, o)
	if err != nil {
		return err
	}
	failures, ok := s.check(r)
	if ok && dc.check != nil {
		if err := dc.check(r); err != nil {
			failures, ok = append(failures, err.Error()), false
		}
	}
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	fmt.Fprintf(c.stdout, "%s call %s (%s): %.1f s of simulated call in %d ms\n", mark, r.Status, r.Reason, r.Duration.Seconds(), time.Since(start).Milliseconds())
	for _, f := range failures {
		fmt.Fprintf(c.stdout, "  ✗ %s\n", f)
	}
	if !ok {
		return fmt.Errorf("call did not go as expected (%s)", r.Reason)
	}
	return nil
}

// serveLoopback serves h on 127.0.0.1 on a free port and returns its http:// URL.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listening on loopback: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}

func httpURLTail(u string) string { return u[len("http"):] }

func joinLines(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "\n"
		}
		out += x
	}
	return out
}
