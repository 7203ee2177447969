package callctl_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
)

// The tests of this file measure at a loopback application what a scenario's network
// faults (Script.Network) do to it: the latency it sees between its answer and the
// next request, the attempts that never reach it. Delays are real waits on the
// connection, so the assertions are lower bounds: a delay that was injected cannot
// have taken less.

// stamps records, per path, when the app got each request and when it answered.
type stamps struct {
	mu                sync.Mutex
	arrived, answered map[string][]time.Time
	requests          int
}

func newStamps() *stamps {
	return &stamps{arrived: map[string][]time.Time{}, answered: map[string][]time.Time{}}
}

func (s *stamps) arrive(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arrived[path] = append(s.arrived[path], time.Now())
	s.requests++
}

func (s *stamps) answer(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answered[path] = append(s.answered[path], time.Now())
}

func (s *stamps) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.arrived[path])
}

// gap is the time from the app's first answer on from to the first request on to.
func (s *stamps) gap(from, to string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.answered[from]) == 0 || len(s.arrived[to]) == 0 {
		return -1
	}
	return s.arrived[to][0].Sub(s.answered[from][0])
}

// gatherApp answers /call with a gather whose action hook is /g, and /g with a
// hangup.
func gatherApp(s *stamps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.arrive(r.URL.Path)
		defer s.answer(r.URL.Path)
		switch r.URL.Path {
		case "/call":
			writeJSON(w, []any{map[string]any{"verb": "gather", "actionHook": "/g"}, hangupVerb})
		default:
			writeJSON(w, []any{hangupVerb})
		}
	})
}

// gatheredCall runs a call under faults against gatherApp at path (with the app's
// fragment), the caller answering its gather; the app must hang the call up.
func gatheredCall(t *testing.T, path string, faults callctl.NetworkFaults) (*stamps, *callctl.Result) {
	t.Helper()
	s := newStamps()
	o := baseOptions(t, serve(t, gatherApp(s), false)+path)
	o.Script = callctl.Script{Gathers: []callctl.GatherInput{{Digits: "1"}}, Network: faults}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	return s, r
}

// faultEvents lists the timeline's fault events as "fault attempt".
func faultEvents(r *callctl.Result) []string {
	var out []string
	for _, e := range r.Timeline {
		if e.Kind == callctl.KindFault {
			out = append(out, e.Fault+" "+itoa(e.Attempt))
		}
	}
	return out
}

// attemptClasses lists the classes of the hook.attempt events.
func attemptClasses(r *callctl.Result) []string {
	var out []string
	for _, e := range r.Timeline {
		if e.Kind == callctl.KindHookAttempt {
			out = append(out, e.Class)
		}
	}
	return out
}

// Latency and a slow app delay what the app sees: the next request comes at least
// the injected delay after its answer (latency counts twice, answer and request; a
// slow app once), on HTTP hooks and WebSocket messages alike, and the timeline says
// so at the start and in the attempts' durations.
func TestNetworkDelaysSeenByTheApp(t *testing.T) {
	const d = 150 * time.Millisecond
	for _, tc := range []struct {
		name    string
		faults  callctl.NetworkFaults
		atLeast time.Duration
		start   string
	}{
		{"latency", callctl.NetworkFaults{Latency: d, Jitter: 20 * time.Millisecond}, 2 * (d - 20*time.Millisecond), "latency 0"},
		{"slow app", callctl.NetworkFaults{SlowApp: d}, d, "slow-app 0"},
	} {
		t.Run(tc.name+" HTTP", func(t *testing.T) {
			s, r := gatheredCall(t, "/call", tc.faults)
			if gap := s.gap("/call", "/g"); gap < tc.atLeast {
				t.Errorf("the app saw /g %v after answering /call, want at least %v", gap, tc.atLeast)
			}
			if f := faultEvents(r); len(f) != 1 || f[0] != tc.start {
				t.Errorf("fault events %v, want [%s]", f, tc.start)
			}
			for _, e := range r.Timeline {
				if e.Kind == callctl.KindHookAttempt && e.Duration < tc.atLeast/2 {
					t.Errorf("hook.attempt %s took %v: the delay is not in it", e.URL, e.Duration)
				}
			}
		})
		t.Run(tc.name+" WebSocket", func(t *testing.T) {
			var mu sync.Mutex
			var acked, next time.Time
			_, url := newWS(t, func(s *wsSession) {
				m := s.next("session:new")
				mu.Lock()
				acked = time.Now()
				mu.Unlock()
				s.ack(m, say("hi"), hangupVerb)
				if s.read() != nil { // call:status in-progress
					mu.Lock()
					next = time.Now()
					mu.Unlock()
				}
				s.drain()
			})
			o := baseOptions(t, url)
			o.Script.Network = tc.faults
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			mu.Lock()
			defer mu.Unlock()
			if gap := next.Sub(acked); next.IsZero() || gap < tc.atLeast {
				t.Errorf("the app got its next message %v after its ack, want at least %v", gap, tc.atLeast)
			}
			if f := faultEvents(r); len(f) != 1 || f[0] != tc.start {
				t.Errorf("fault events %v, want [%s]", f, tc.start)
			}
		})
	}
}

// A slow app whose answers come after the hook timeout times out: the call retries
// it under rp=rt as its fragment says, the app sees every attempt, and the timeline
// shows them as response timeouts.
func TestSlowAppTimesOut(t *testing.T) {
	s := newStamps()
	o := baseOptions(t, serve(t, gatherApp(s), false)+"/call#rc=1&rp=rt")
	hooks := transport.NewHookClient(transport.HookClientOptions{Rules: transport.CallControlRules(true), Timeout: 200 * time.Millisecond})
	t.Cleanup(hooks.CloseIdleConnections)
	o.Hooks = hooks
	o.Script.Network = callctl.NetworkFaults{SlowApp: 2 * time.Second}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonCallHookFailed, 480)
	if got := strings.Join(attemptClasses(r), ","); got != "rt,rt" || s.count("/call") != 2 {
		t.Errorf("attempts %s, the app saw %d requests: want two response timeouts, both seen", got, s.count("/call"))
	}
}

// Refused attempts never reach the app; reset ones reach it and lose its answer. The
// call retries them under its fragment (ct), the app sees exactly the attempts that
// connected, and each fault is on the timeline just before its attempt.
func TestRefusedAndResetAttemptsSeenByTheApp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		faults   callctl.NetworkFaults
		seen     int // requests (HTTP) or upgrades (WebSocket) the app got
		faultsAt []string
	}{
		{"refused", callctl.NetworkFaults{Refuse: 2}, 1, []string{"refuse 1", "refuse 2"}},
		{"reset", callctl.NetworkFaults{Reset: 2}, 3, []string{"reset 1", "reset 2"}},
		{"refused then reset", callctl.NetworkFaults{Refuse: 1, Reset: 1}, 2, []string{"refuse 1", "reset 2"}},
	} {
		t.Run(tc.name+" HTTP", func(t *testing.T) {
			s, r := gatheredCall(t, "/call#rc=2&rp=ct", tc.faults)
			if n := s.count("/call"); n != tc.seen || s.count("/g") != 1 {
				t.Errorf("the app saw %d call hooks and %d /g, want %d and 1", n, s.count("/g"), tc.seen)
			}
			if got, want := strings.Join(faultEvents(r), ","), strings.Join(tc.faultsAt, ","); got != want {
				t.Errorf("fault events %s, want %s", got, want)
			}
			if got := strings.Join(attemptClasses(r), ","); got != "ct,ct,success,success" {
				t.Errorf("attempt classes %s", got)
			}
			for i, e := range r.Timeline {
				if e.Kind == callctl.KindFault && (r.Timeline[i+1].Kind != callctl.KindHookAttempt || r.Timeline[i+1].Attempt != e.Attempt || e.URL != r.Timeline[i+1].URL) {
					t.Errorf("fault %+v is not followed by its attempt: %+v", e, r.Timeline[i+1])
				}
			}
		})
		t.Run(tc.name+" WebSocket", func(t *testing.T) {
			srv, url := newWS(t, func(s *wsSession) {
				s.ack(s.next("session:new"), say("hi"), hangupVerb)
				s.drain()
			})
			o := baseOptions(t, url)
			o.Script.Network = tc.faults
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			if n := int(srv.conns.Load()); n != tc.seen {
				t.Errorf("the app saw %d upgrades, want %d", n, tc.seen)
			}
			if got, want := strings.Join(faultEvents(r), ","), strings.Join(tc.faultsAt, ","); got != want {
				t.Errorf("fault events %s, want %s", got, want)
			}
		})
	}
}

// docs/call-control.md §5: the connections a scenario's faults make go through the
// same egress rules and URL checks as every other dial: an allow-list lets them
// through; rules that refuse the address refuse it (never retried, and no fault is
// injected on what was never dialed); a URL with user-info is refused, for network
// faults and for a drop without a close frame alike.
func TestFaultsGoThroughTheEgressRules(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		s.ack(s.next("session:new"), say("hi"), hangupVerb)
		s.drain()
	})
	allowLoopback := transport.CallControlRules(false)
	allowLoopback.AllowPrefixes = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	refuse := callctl.Script{Network: callctl.NetworkFaults{Refuse: 1}}
	drop := callctl.Script{Faults: []callctl.Fault{{AfterMessage: 2}}}
	userInfo := strings.Replace(url, "ws://", "ws://u:p@", 1)
	for _, tc := range []struct {
		name    string
		url     string
		rules   transport.EgressRules
		script  callctl.Script
		classes string
		reason  string
	}{
		{"allow-list", url, allowLoopback, refuse, "ct,success", callctl.ReasonAppHangup},
		{"refused address", url, transport.CallControlRules(false), refuse, "egress_refused", callctl.ReasonConnectFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t, tc.url)
			o.EgressRules, o.Script = tc.rules, tc.script
			r := run(t, o)
			if got := strings.Join(attemptClasses(r), ","); got != tc.classes || r.Reason != tc.reason {
				t.Errorf("attempts %s, reason %s; want %s, %s", got, r.Reason, tc.classes, tc.reason)
			}
			if tc.classes == "egress_refused" && len(faultEvents(r)) != 0 {
				t.Errorf("faults injected on a refused destination: %v", faultEvents(r))
			}
		})
	}
	// A URL with user-info is refused before anything is dialed (issue 13), for
	// network faults and a drop without a close frame alike.
	for _, script := range []callctl.Script{refuse, drop} {
		o := baseOptions(t, userInfo)
		o.EgressRules, o.Script = transport.CallControlRules(true), script
		if _, err := callctl.Run(context.Background(), o); !errors.Is(err, fragment.ErrUserInfo) || strings.Contains(err.Error(), "u:p") {
			t.Errorf("Run with %q: %v, want a refusal wrapping fragment.ErrUserInfo that does not quote u:p", userInfo, err)
		}
	}
}
