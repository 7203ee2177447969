package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/transport"
)

// ServeApps runs the example HTTP app (/call, /gather, /status) and WebSocket app
// (/ws) on ln until ctx ends, having printed their URLs to w.
func ServeApps(ctx context.Context, ln net.Listener, w io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/ws", &exampleapp.WSApp{})
	mux.Handle("/", &exampleapp.HTTPApp{})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(w, "example apps listening (Ctrl-C to stop):\n  HTTP webhooks  http://%[1]s/call\n  WebSocket      ws://%[1]s/ws\n", ln.Addr())
	select {
	case err := <-done:
		return err
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
	title, story       string
	url                string
	secret, statusHook string
	scenario           scenario.Scenario
	check              func(*callctl.Result) error
}

// Run runs the demo, printing to w: a call against each example app on loopback with
// the call-control settings cfg, then a webhook through the outbox. Its error says
// what did not go as expected.
func Run(ctx context.Context, w io.Writer, cfg featureserver.CallControlConfig, log zerolog.Logger) error {
	const secret = "demo-secret"
	httpURL, stopHTTP, err := serveLoopback(&exampleapp.HTTPApp{Secret: secret})
	if err != nil {
		return err
	}
	defer stopHTTP()
	wsApp := &exampleapp.WSApp{}
	wsURL, stopWS, err := serveLoopback(wsApp)
	if err != nil {
		return err
	}
	defer stopWS()

	calls := []demoCall{{
		title: "HTTP webhook app", url: httpURL + "/call",
		story:  "The caller presses 1 at the gather. Hooks are signed (Jambonz-Signature) and status\nnotifications go to /status.",
		secret: secret, statusHook: "/status",
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
	fmt.Fprintln(w, "Switchboard demo: two example apps on loopback, one simulated call each, then one\nwebhook delivered through the outbox on SQLite.")
	var failed []string
	for _, dc := range calls {
		if err := runCall(ctx, w, cfg, log, dc); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", dc.title, err))
		}
	}
	if err := runOutbox(ctx, w); err != nil {
		failed = append(failed, fmt.Sprintf("webhook outbox: %v", err))
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "\n"))
	}
	fmt.Fprintln(w, "\nNext: run the example apps with `switchboard demo --serve 127.0.0.1:3000` and simulate calls\nagainst them (or your own app), e.g.\n  switchboard simulate http://127.0.0.1:3000/call --scenario examples/ivr.yaml")
	return nil
}

func runCall(ctx context.Context, w io.Writer, cfg featureserver.CallControlConfig, log zerolog.Logger, dc demoCall) error {
	fmt.Fprintf(w, "\n── %s  %s\n%s\n\n", dc.title, dc.url, dc.story)
	const timeout = 20 * time.Second
	calls := featureserver.NewCallNetwork(cfg, transport.CallControlRules(true), log)
	defer calls.CloseIdleConnections()
	s, err := simulation.New(simulation.Options{AppURL: dc.url, Scenario: &dc.scenario, Secret: dc.secret, StatusHook: dc.statusHook,
		Calls: 1, Concurrency: 1, Timeout: timeout, IdleLimit: 5 * time.Second}, calls, w)
	if err != nil {
		return err
	}
	o := s.CallOptions()
	o.OnEvent = func(e callctl.Event) { fmt.Fprintln(w, e.String()) }
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	r, err := callctl.Run(ctx, o)
	if err != nil {
		return err
	}
	failures, ok := s.Check(r)
	if ok && dc.check != nil {
		if err := dc.check(r); err != nil {
			failures, ok = append(failures, err.Error()), false
		}
	}
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	fmt.Fprintf(w, "%s call %s (%s): %.1f s of simulated call in %d ms\n", mark, r.Status, r.Reason, r.Duration.Seconds(), time.Since(start).Milliseconds())
	for _, f := range failures {
		fmt.Fprintf(w, "  ✗ %s\n", f)
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
