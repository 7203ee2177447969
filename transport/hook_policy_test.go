package transport_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// slowHeaders holds the answer back well past the short hook timeout used below.
var slowHeaders = transporttest.Step{Delay: 30 * time.Second}

// TestHookPolicyRows drives the hook client against the fault server for the rows
// of docs/call-control.md §1–3 (HTTP): attempts made, classes retried or not, and the
// exact backoff delays recorded through the injected Sleep.
func TestHookPolicyRows(t *testing.T) {
	t.Parallel()
	const (
		ct  = retry.Connect
		rt  = retry.ResponseTimeout
		s5  = retry.Status5xx
		s4  = retry.Status4xx
		ok  = retry.Success
		red = retry.Redirect
		unx = retry.UnexpectedStatus
		unp = retry.Unparseable
	)
	type row struct {
		name     string
		fragment string
		steps    []transporttest.Step // scripted answers of the server
		refused  bool                 // target a closed port instead
		timeout  time.Duration        // hook timeout (default 5 s)
		classes  []retry.Class        // class of each attempt, in order
		delays   []time.Duration      // waits recorded by Sleep
		status   int                  // final status (0: none)
	}
	rows := []row{
		{name: "rc=3 rp=5xx,ct: four 500s", fragment: "#rc=3&rp=5xx,ct",
			steps:   transporttest.Statuses(500, 500, 500, 500),
			classes: []retry.Class{s5, s5, s5, s5}, delays: []time.Duration{ms(500), ms(1000), ms(2000)}, status: 500},
		{name: "rc=3 rp=5xx: recovers on third", fragment: "#rc=3&rp=5xx",
			steps:   transporttest.Statuses(503, 500, 200),
			classes: []retry.Class{s5, s5, ok}, delays: []time.Duration{ms(500), ms(1000)}, status: 200},
		{name: "default policy: one attempt on 500", steps: transporttest.Statuses(500, 200),
			classes: []retry.Class{s5}, status: 500},
		{name: "rc=0: no retry even for ct", fragment: "#rc=0&rp=ct", refused: true,
			classes: []retry.Class{ct}},
		{name: "default policy refused: one attempt", refused: true, classes: []retry.Class{ct}},
		{name: "rc=2 default rp (ct): refused retried", fragment: "#rc=2", refused: true,
			classes: []retry.Class{ct, ct, ct}, delays: []time.Duration{ms(500), ms(1000)}},
		{name: "refused not retried under rp=5xx", fragment: "#rc=2&rp=5xx", refused: true,
			classes: []retry.Class{ct}},
		{name: "rc=2 rp=ct: 500 not retried", fragment: "#rc=2&rp=ct", steps: transporttest.Statuses(500),
			classes: []retry.Class{s5}, status: 500},
		{name: "rc=5 rp=all: full ramp", fragment: "#rc=5&rp=all", steps: transporttest.Statuses(500),
			classes: []retry.Class{s5, s5, s5, s5, s5, s5},
			delays:  []time.Duration{ms(500), ms(1000), ms(2000), ms(4000), ms(6000)}, status: 500},
		{name: "rc above 5 is 5", fragment: "#rc=9&rp=5xx", steps: transporttest.Statuses(500),
			classes: []retry.Class{s5, s5, s5, s5, s5, s5},
			delays:  []time.Duration{ms(500), ms(1000), ms(2000), ms(4000), ms(6000)}, status: 500},
		{name: "invalid rc: default 0", fragment: "#rc=x&rp=5xx", steps: transporttest.Statuses(500),
			classes: []retry.Class{s5}, status: 500},
		{name: "4xx retried under rp=4xx", fragment: "#rc=2&rp=4xx", steps: transporttest.Statuses(404, 429, 200),
			classes: []retry.Class{s4, retry.Throttled, ok}, delays: []time.Duration{ms(500), ms(1000)}, status: 200},
		{name: "410 counts as 4xx", fragment: "#rc=1&rp=4xx", steps: transporttest.Statuses(410, 204),
			classes: []retry.Class{retry.Gone, ok}, delays: []time.Duration{ms(500)}, status: 204},
		{name: "4xx not retried under rp=5xx,ct", fragment: "#rc=2&rp=5xx,ct", steps: transporttest.Statuses(404),
			classes: []retry.Class{s4}, status: 404},
		{name: "3xx not followed, not retried without all", fragment: "#rc=2&rp=ct,rt,4xx,5xx",
			steps:   []transporttest.Step{transporttest.Redirect(302, "/elsewhere")},
			classes: []retry.Class{red}, status: 302},
		{name: "3xx retried under all", fragment: "#rc=2&rp=all",
			steps:   []transporttest.Step{transporttest.Redirect(307, "/elsewhere"), transporttest.Redirect(301, "/x"), transporttest.Status(202)},
			classes: []retry.Class{red, red, ok}, delays: []time.Duration{ms(500), ms(1000)}, status: 202},
		{name: "201 is a failure", fragment: "#rc=2&rp=5xx,ct", steps: transporttest.Statuses(201),
			classes: []retry.Class{unx}, status: 201},
		{name: "201 retried under all", fragment: "#rc=2&rp=all", steps: transporttest.Statuses(201, 200),
			classes: []retry.Class{unx, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "200 succeeds", steps: transporttest.Statuses(200), classes: []retry.Class{ok}, status: 200},
		{name: "202 succeeds", steps: transporttest.Statuses(202), classes: []retry.Class{ok}, status: 202},
		{name: "204 succeeds", steps: transporttest.Statuses(204), classes: []retry.Class{ok}, status: 204},
		{name: "stalled body is rt, retried under rp=rt", fragment: "#rc=1&rp=rt", timeout: ms(150),
			steps:   []transporttest.Step{{Body: []byte(`[{"verb":"say"}]`), StallAfter: 2}, transporttest.JSON(200, `[]`)},
			classes: []retry.Class{rt, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "stalled body not retried under default rp", fragment: "#rc=3", timeout: ms(150),
			steps:   []transporttest.Step{{Body: []byte(`[{"verb":"say"}]`), StallAfter: 2}},
			classes: []retry.Class{rt}, status: 200},
		{name: "rt retried under rp=rt", fragment: "#rc=1&rp=rt", timeout: ms(150),
			steps:   []transporttest.Step{slowHeaders, transporttest.Status(200)},
			classes: []retry.Class{rt, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "rt not retried under default rp", fragment: "#rc=3", timeout: ms(150),
			steps: []transporttest.Step{slowHeaders, transporttest.Status(200)}, classes: []retry.Class{rt}},
		{name: "rt not retried under rp=ct,5xx", fragment: "#rc=3&rp=ct,5xx", timeout: ms(150),
			steps: []transporttest.Step{slowHeaders, transporttest.Status(200)}, classes: []retry.Class{rt}},
		{name: "rt retried under all", fragment: "#rc=1&rp=all", timeout: ms(150),
			steps:   []transporttest.Step{slowHeaders, transporttest.Status(200)},
			classes: []retry.Class{rt, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "reset before headers is ct", fragment: "#rc=1&rp=ct",
			steps:   []transporttest.Step{{ResetBeforeHeaders: true}, transporttest.Status(200)},
			classes: []retry.Class{ct, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "closed before headers is ct", fragment: "#rc=1&rp=ct",
			steps:   []transporttest.Step{{CloseBeforeHeaders: true}, transporttest.Status(200)},
			classes: []retry.Class{ct, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "reset mid-body is unparseable, not retried under ct,5xx", fragment: "#rc=2&rp=ct,5xx",
			steps:   []transporttest.Step{{BodySize: 64 << 10, ResetAfter: 100}},
			classes: []retry.Class{unp}, status: 200},
		{name: "reset mid-body retried under all", fragment: "#rc=2&rp=all",
			steps:   []transporttest.Step{{BodySize: 64 << 10, ResetAfter: 100}, transporttest.JSON(200, "[]")},
			classes: []retry.Class{unp, ok}, delays: []time.Duration{ms(500)}, status: 200},
		{name: "oversized body is unparseable", fragment: "#rc=2&rp=ct,4xx,5xx",
			steps: []transporttest.Step{{BodySize: 2 << 20}}, classes: []retry.Class{unp}, status: 200},
	}
	check := func(t *testing.T, tc row, inBubble bool) {
		opts := transport.HookClientOptions{Timeout: tc.timeout}
		var srv *transporttest.Server
		if inBubble {
			var pipes *transporttest.Pipes
			srv, pipes = transporttest.NewPipeServer(t)
			opts = transport.WithNetwork(opts, pipes.DialContext)
		} else {
			srv = transporttest.NewServer(t)
		}
		srv.Script("/hook", tc.steps...)
		base := srv.URL + "/hook"
		if tc.refused {
			base = "http://" + transporttest.ClosedAddr(t) + "/hook"
		}
		client, rec := newHookClient(t, opts)
		var observed []transport.Attempt
		resp, err := client.Do(context.Background(), transport.HookRequest{
			Target:   mustTarget(t, base+tc.fragment),
			Payload:  map[string]any{"call_sid": "c1"},
			Observer: func(a transport.Attempt) { observed = append(observed, a) },
		})

		var got []retry.Class
		for _, a := range observed {
			got = append(got, a.Class)
		}
		if !slices.Equal(got, tc.classes) {
			t.Fatalf("attempt classes = %v, want %v (err %v)", got, tc.classes, err)
		}
		if d := rec.Delays(); !slices.Equal(d, tc.delays) {
			t.Errorf("recorded delays = %v, want %v", d, tc.delays)
		}
		for i, a := range observed {
			if a.Number != i+1 {
				t.Errorf("attempt %d numbered %d", i+1, a.Number)
			}
			wantDelay := time.Duration(0)
			if i > 0 {
				wantDelay = tc.delays[i-1]
			}
			if a.DelayBefore != wantDelay {
				t.Errorf("attempt %d DelayBefore = %v, want %v", i+1, a.DelayBefore, wantDelay)
			}
		}
		if !tc.refused {
			if n := len(srv.RequestsTo("/hook")); n != len(tc.classes) {
				t.Errorf("server saw %d requests, want %d", n, len(tc.classes))
			}
		}
		last := tc.classes[len(tc.classes)-1]
		if last == ok {
			if err != nil {
				t.Fatalf("Do: %v", err)
			}
		} else {
			var he *transport.HookError
			if !errors.As(err, &he) {
				t.Fatalf("error %v (%T) is not a *HookError", err, err)
			}
			if he.Class != last || he.Status != tc.status || len(he.Attempts) != len(tc.classes) {
				t.Errorf("HookError = {Class %s, Status %d, %d attempts}, want {%s, %d, %d}",
					he.Class, he.Status, len(he.Attempts), last, tc.status, len(tc.classes))
			}
		}
		switch {
		case tc.status == 0 && resp != nil:
			t.Errorf("got a response (status %d) though none arrived", resp.Status)
		case tc.status != 0 && (resp == nil || resp.Status != tc.status):
			t.Errorf("response = %+v, want status %d", resp, tc.status)
		}
		if tc.status != 0 && len(resp.Attempts) != len(tc.classes) {
			t.Errorf("response lists %d attempts, want %d", len(resp.Attempts), len(tc.classes))
		}
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.timeout == 0 {
				check(t, tc, false)
				return
			}
			// A row with a short timeout runs in a synctest bubble on an in-memory
			// network: the timeout fires only when nothing else can happen, so an
			// answer that must come before it (the retry's) always does, however
			// loaded the machine. A real 150 ms timer raced that answer.
			synctest.Test(t, func(t *testing.T) { check(t, tc, true) })
		})
	}
}

// A redirect is never followed: the Location is not requested.
func TestHookRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/hook", transporttest.Redirect(http.StatusFound, "/target"))
	client, _ := newHookClient(t, transport.HookClientOptions{})
	_, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, srv.URL+"/hook#rc=2&rp=all")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.Redirect {
		t.Fatalf("err = %v, want a redirect HookError", err)
	}
	if n := len(srv.RequestsTo("/target")); n != 0 {
		t.Fatalf("redirect target requested %d times", n)
	}
}

// A host that accepts nothing within the timeout (TCP connect timeout) is ct.
func TestHookConnectTimeoutRetriedUnderCt(t *testing.T) {
	t.Parallel()
	dead := transporttest.NewUnaccepting(t)
	client, rec := newHookClient(t, transport.HookClientOptions{Timeout: ms(150)})
	_, err := client.Do(context.Background(), transport.HookRequest{Target: mustTarget(t, "http://"+dead.Addr+"/hook#rc=1&rp=ct")})
	var he *transport.HookError
	if !errors.As(err, &he) || he.Class != retry.Connect || len(he.Attempts) != 2 {
		t.Fatalf("err = %v, want ct after 2 attempts", err)
	}
	var ce *transport.ConnectError
	if !errors.As(err, &ce) {
		t.Errorf("error %v does not carry a *ConnectError", err)
	}
	if d := rec.Delays(); !slices.Equal(d, []time.Duration{ms(500)}) {
		t.Errorf("delays = %v", d)
	}
}
