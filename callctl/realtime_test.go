package callctl_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// The tests of this file run calls on the wall clock (Options.RealTime) inside a
// testing/synctest bubble, against apps on an in-memory network: the waits are real
// waits of the bubble's clock, so the times the app sees are exact, and a 30-second
// pause takes no time. The hook client and the WebSocket client still check the
// egress rules before they connect through the pipes (transport.ConnectFunc).

// realTimeOptions serves h on an in-memory network in the bubble and returns Options
// of a wall-clock call to path there (a WebSocket app when path starts with /ws).
// Call it inside the bubble.
func realTimeOptions(t *testing.T, h http.Handler, path string) callctl.Options {
	t.Helper()
	pipes := transporttest.NewPipes()
	srv := &httptest.Server{Listener: pipes, Config: &http.Server{Handler: h}}
	srv.Start()
	connect := func(ctx context.Context, network, address string, _ func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
		return pipes.DialContext(ctx, network, address)
	}
	rules := transport.CallControlRules(true)
	hooks := transport.NewHookClient(transport.HookClientOptions{Rules: rules, Timeout: 2 * time.Second, Connect: connect})
	ws := transport.NewHTTPClient(rules, transport.ClientOptions{Connect: connect})
	t.Cleanup(func() {
		hooks.CloseIdleConnections()
		ws.CloseIdleConnections()
		srv.CloseClientConnections()
		srv.Close()
	})
	app := srv.URL + path
	if strings.HasPrefix(path, "/ws") {
		app = "ws" + strings.TrimPrefix(app, "http")
	}
	return callctl.Options{
		AppURL:      app,
		Hooks:       hooks,
		WebSocket:   wsclient.Options{HTTPClient: ws, HandshakeTimeout: 5 * time.Second},
		EgressRules: rules,
		AckTimeout:  2 * time.Second,
		IdleLimit:   2 * time.Second,
		RealTime:    true,
	}
}

// arrivals records when the app got each request, since the bubble started.
type arrivals struct {
	start time.Time
	mu    sync.Mutex
	at    map[string][]time.Duration
}

func newArrivals() *arrivals { return &arrivals{start: time.Now(), at: map[string][]time.Duration{}} }

func (a *arrivals) add(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at[key] = append(a.at[key], time.Since(a.start))
}

func (a *arrivals) of(key string) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.at[key])
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func seconds(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}

// sleepUnlessDone sleeps d in the bubble, or less when the test is over: a goroutine
// still asleep when the test's function returns would deadlock the bubble (its clock
// stops), hiding the failure that ended the test early.
func sleepUnlessDone(t *testing.T, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-t.Context().Done():
		return false
	}
}

// endAt returns the time of the call.end event.
func endAt(r *callctl.Result) time.Duration { return r.Timeline[len(r.Timeline)-1].At }

// docs/call-control.md §2, §4b: on the wall clock an app failing with 503 under
// #rc=3&rp=5xx sees its four requests at 0, 0.5, 1.5 and 3.5 s, and the media then
// takes its time for real: the gather's action hook comes after the greeting (0.5 s),
// the prompt (0.5 s) and the caller's 1.5 s. The timeline reports those real times.
func TestRealTimeRetriesAndMedia(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := newArrivals()
		o := realTimeOptions(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.add(r.URL.Path)
			switch {
			case r.URL.Path == "/call" && len(seen.of("/call")) <= 3:
				w.WriteHeader(503)
			case r.URL.Path == "/call":
				writeJSON(w, []any{say("hi"), map[string]any{"verb": "gather", "actionHook": "/g", "numDigits": 1, "say": map[string]any{"text": "ok"}}, hangupVerb})
			default:
				writeJSON(w, []any{hangupVerb})
			}
		}), "/call#rc=3&rp=5xx")
		o.Script = callctl.Script{Gathers: []callctl.GatherInput{{Digits: "1", After: 1500 * time.Millisecond}}}
		r, err := callctl.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
		if got, want := seen.of("/call"), seconds(0, 0.5, 1.5, 3.5); !slices.Equal(got, want) {
			t.Errorf("the app saw the call hook at %v, want %v", got, want)
		}
		if got, want := seen.of("/g"), seconds(6); !slices.Equal(got, want) {
			t.Errorf("the app saw the gather's hook at %v, want %v", got, want)
		}
		if endAt(r) != 6*time.Second || r.Duration != 6*time.Second {
			t.Errorf("call.end at %v, duration %v: the timeline must report the real 6 s", endAt(r), r.Duration)
		}
	})
}

// docs/call-control.md §4b: a wall-clock call reacts at once to what must interrupt it:
// live call control (a redirect cuts a 30 s pause short and moves the call; a hangup
// ends a retry wait), the caller hanging up during a retry wait, the context's end
// during a pause. No alert is raised for the hooks they cut short.
func TestRealTimeWaitsAreInterruptible(t *testing.T) {
	pauseApp := func(seen *arrivals) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.add(r.URL.Path)
			switch r.URL.Path {
			case "/call":
				writeJSON(w, []any{map[string]any{"verb": "pause", "length": 30}, say("too late"), hangupVerb})
			case "/other":
				writeJSON(w, []any{say("moved"), hangupVerb})
			default:
				w.WriteHeader(503)
			}
		})
	}
	controlAt := func(t *testing.T, o *callctl.Options, after time.Duration, ctl callctl.Control) {
		ch := make(chan callctl.Control, 1)
		o.Control = ch
		go func() {
			if sleepUnlessDone(t, after) {
				ch <- ctl
			}
		}()
	}
	for _, tc := range []struct {
		name     string
		path     string
		setup    func(t *testing.T, o *callctl.Options)
		ctx      time.Duration // a context deadline, when set
		reason   string
		end      time.Duration
		verbs    []string
		requests map[string][]time.Duration
	}{{
		name: "redirect control during a pause", path: "/call",
		setup: func(t *testing.T, o *callctl.Options) {
			controlAt(t, o, 2*time.Second, callctl.Control{Redirect: "/other"})
		},
		reason: callctl.ReasonAppHangup, end: 2500 * time.Millisecond, verbs: []string{"pause", "say", "hangup"},
		requests: map[string][]time.Duration{"/call": seconds(0), "/other": seconds(2)},
	}, {
		name: "hangup control during a retry wait", path: "/fail#rc=5&rp=5xx",
		setup:  func(t *testing.T, o *callctl.Options) { controlAt(t, o, time.Second, callctl.Control{Hangup: true}) },
		reason: callctl.ReasonAPIHangup, end: time.Second,
		requests: map[string][]time.Duration{"/fail": seconds(0, 0.5)},
	}, {
		name: "the caller hangs up during a retry wait", path: "/fail#rc=5&rp=5xx",
		setup:  func(_ *testing.T, o *callctl.Options) { o.Script.HangupAfter = 1200 * time.Millisecond },
		reason: callctl.ReasonCallerHangup, end: 1200 * time.Millisecond,
		requests: map[string][]time.Duration{"/fail": seconds(0, 0.5)},
	}, {
		name: "the context ends during a pause", path: "/call", ctx: 3 * time.Second,
		setup:  func(*testing.T, *callctl.Options) {},
		reason: callctl.ReasonCanceled, end: 3 * time.Second, verbs: []string{"pause"},
		requests: map[string][]time.Duration{"/call": seconds(0)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				seen := newArrivals()
				o := realTimeOptions(t, pauseApp(seen), tc.path)
				tc.setup(t, &o)
				ctx := context.Background()
				if tc.ctx > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctx)
					defer cancel()
				}
				r, err := callctl.Run(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if r.Reason != tc.reason || endAt(r) != tc.end || len(r.Alerts) != 0 || !slices.Equal(r.Verbs, tc.verbs) {
					t.Errorf("ended %s at %v with alerts %v and verbs %v; want %s at %v, no alert, verbs %v\n%v",
						r.Reason, endAt(r), r.Alerts, r.Verbs, tc.reason, tc.end, tc.verbs, kinds(r))
				}
				for path, want := range tc.requests {
					if got := seen.of(path); !slices.Equal(got, want) {
						t.Errorf("%s requested at %v, want %v", path, got, want)
					}
				}
			})
		})
	}
}

// docs/call-control.md §4, §4b: on the wall clock a WebSocket application's command
// that replaces the verbs cuts the verb playing short (the app is heard at once, not
// after a 30 s pause), and a reconnect waits its backoff for real: the app sees the new
// upgrade 0.5 s after the drop.
func TestRealTimeWebSocket(t *testing.T) {
	t.Run("a redirect command during a pause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &wsServer{t: t, handle: func(s *wsSession) {
				s.ack(s.next("session:new"), map[string]any{"verb": "pause", "length": 30}, say("too late"), hangupVerb)
				s.next("call:status") // trying: the pipe holds no message unread
				if !sleepUnlessDone(t, 2*time.Second) {
					return
				}
				s.send(map[string]any{"type": "command", "command": "redirect", "data": []any{say("moved"), hangupVerb}})
				s.drain()
			}}
			r, err := callctl.Run(context.Background(), realTimeOptions(t, srv, "/ws"))
			if err != nil {
				t.Fatal(err)
			}
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			var pauseEnd time.Duration
			for _, e := range r.Timeline {
				if e.Kind == callctl.KindVerbEnd && e.Verb == "pause" {
					pauseEnd = e.At
				}
			}
			if pauseEnd != 2*time.Second || !slices.Equal(r.Verbs, []string{"pause", "say", "hangup"}) || endAt(r) != 2500*time.Millisecond {
				t.Errorf("pause ended at %v, verbs %v, call.end at %v: want the pause cut at 2 s, then the redirect's say", pauseEnd, r.Verbs, endAt(r))
			}
		})
	})
	t.Run("reconnect backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			seen := newArrivals()
			srv := &wsServer{t: t, handle: func(s *wsSession) {
				seen.add("upgrade")
				if s.n == 1 {
					s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g", "numDigits": 1}, hangupVerb)
					s.next("verb:hook")
					seen.add("drop")
					_ = s.conn.Close(websocket.StatusInternalError, "crash")
					return
				}
				s.ack(s.next("session:reconnect"))
				s.drain()
			}}
			o := realTimeOptions(t, srv, "/ws#rc=3")
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			r, err := callctl.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			// The gather's prompt-less wait is the caller's default 2 s.
			drop := seen.of("drop")
			if got, want := seen.of("upgrade"), seconds(0, 2.5); len(drop) != 1 || drop[0] != 2*time.Second || !slices.Equal(got, want) {
				t.Errorf("upgrades at %v, drop at %v: want the reconnect 0.5 s after the drop at 2 s", got, drop)
			}
		})
	})
	t.Run("live call control during a reconnect episode", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &wsServer{t: t, handle: func(s *wsSession) {
				s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g", "numDigits": 1}, hangupVerb)
				s.next("verb:hook")
				_ = s.conn.Close(websocket.StatusInternalError, "crash")
			}}
			// Every reconnect is answered 503: the episode waits 0.5, 1, 2 s ... between them.
			srv.reject = func(n int) int {
				if n > 1 {
					return 503
				}
				return 0
			}
			o := realTimeOptions(t, srv, "/ws#rc=5")
			o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
			ch := make(chan callctl.Control, 1)
			o.Control = ch
			go func() {
				if sleepUnlessDone(t, 3*time.Second) {
					ch <- callctl.Control{Hangup: true}
				}
			}()
			r, err := callctl.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Reason != callctl.ReasonAPIHangup || endAt(r) != 3*time.Second || len(r.Alerts) != 0 || srv.conns.Load() != 2 {
				t.Errorf("ended %s at %v, alerts %v, %d upgrades: want api-hangup at 3 s (the drop at 2 s, reconnects at 2.5 and 3.5 s cut at 3), no alert, 2 upgrades",
					r.Reason, endAt(r), r.Alerts, srv.conns.Load())
			}
		})
	})
}
