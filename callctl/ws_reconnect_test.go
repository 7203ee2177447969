package callctl_test

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// retryDelays lists the hook.retry delays of the timeline.
func retryDelays(r *callctl.Result) []time.Duration {
	var out []time.Duration
	for _, e := range r.Timeline {
		if e.Kind == callctl.KindHookRetry {
			out = append(out, e.Delay)
		}
	}
	return out
}

func attempts(r *callctl.Result) int { return len(kinds(r, callctl.KindHookAttempt)) }

// dropThenAnswer: the first connection acks session:new with a gather and drops
// (1011) at the verb:hook; later upgrades are answered with status (0: accepted,
// session:reconnect acked).
func dropThenAnswer(t *testing.T, status int) (*wsServer, string) {
	srv, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, say("bye"), hangupVerb)
			s.next("verb:hook")
			_ = s.conn.Close(websocket.StatusInternalError, "crash")
			return
		}
		s.ack(s.next("session:reconnect"))
		s.drain()
	})
	srv.reject = func(n int) int {
		if n > 1 {
			return status
		}
		return 0
	}
	return srv, url
}

// docs/call-control.md §4, §6: a mid-call drop whose reconnect budget runs out ends the
// call with a webhook-connection-failure alert; the episode's delays restart at 0.5 s and
// pass on the simulated clock.
func TestWSReconnectBudgetExhausted(t *testing.T) {
	srv, url := dropThenAnswer(t, 503)
	o := baseOptions(t, url+"#rc=3")
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonReconnectFailed, 200)
	if !hasAlert(r, callctl.AlertWebhookConnectionFailure) {
		t.Fatal("no webhook-connection-failure alert")
	}
	if got, want := retryDelays(r), []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("episode delays %v, want %v", got, want)
	}
	if n := srv.conns.Load(); n != 4 {
		t.Fatalf("%d upgrade requests, want 1 + rc=3", n)
	}
	if len(kinds(r, callctl.KindWSReconnect)) != 3 {
		t.Fatalf("reconnect events %v", kinds(r, callctl.KindWSReconnect))
	}
}

// docs/call-control.md §1, §4: rc=0 means no reconnect at all.
func TestWSReconnectRC0(t *testing.T) {
	srv, url := dropThenAnswer(t, 0)
	r := run(t, baseOptions(t, url+"#rc=0"))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonReconnectFailed, 200)
	if srv.conns.Load() != 1 || !hasAlert(r, callctl.AlertWebhookConnectionFailure) {
		t.Fatalf("rc=0: %d connections", srv.conns.Load())
	}
}

// docs/call-control.md §4: during an episode, 4xx upgrade answers are retried only when
// rp has 4xx or all.
func TestWSReconnect4xxNeedsRP(t *testing.T) {
	for frag, want := range map[string]int32{"#rc=3": 2, "#rc=3&rp=4xx,ct": 4} {
		t.Run(frag, func(t *testing.T) {
			srv, url := dropThenAnswer(t, 403)
			r := run(t, baseOptions(t, url+frag))
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonReconnectFailed, 200)
			if n := srv.conns.Load(); n != want {
				t.Fatalf("%d upgrade requests, want %d", n, want)
			}
		})
	}
}

// docs/call-control.md §4: the session:reconnect ack failing (never sent: a second
// passes) ends the call with the alert.
func TestWSReconnectAckFails(t *testing.T) {
	waitsOutATimeout(t)
	_, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"}, hangupVerb)
			s.next("verb:hook")
			s.conn.CloseNow() // abrupt: no close frame
			return
		}
		s.next("session:reconnect")
		s.drain()
	})
	o := baseOptions(t, url)
	o.AckTimeout = time.Second
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonReconnectFailed, 200)
	if !hasAlert(r, callctl.AlertWebhookConnectionFailure) || !slices.Contains(kinds(r), "ws.close 1006") {
		t.Fatalf("timeline %v", kinds(r))
	}
}

// docs/call-control.md §4: a drop while session:new waits for its ack: the
// session:reconnect ack's verbs start the call.
func TestWSDropWhileSessionNewWaits(t *testing.T) {
	srv, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.next("session:new")
			_ = s.conn.Close(websocket.StatusGoingAway, "restarting")
			return
		}
		s.ack(s.next("session:reconnect"), say("resumed"), hangupVerb)
		s.drain()
	})
	r := run(t, baseOptions(t, url))
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"say", "hangup"}) {
		t.Fatalf("verbs %v", r.Verbs)
	}
	if len(srv.find("session:reconnect")) != 1 {
		t.Fatal("no session:reconnect")
	}
}

// docs/call-control.md §4: the same, with the drop injected by the scenario right after
// session:new.
func TestWSFaultAfterSessionNew(t *testing.T) {
	_, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.drain()
			return
		}
		s.ack(s.next("session:reconnect"), say("resumed"), hangupVerb)
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.Faults = []callctl.Fault{{AfterMessage: 1}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Equal(r.Verbs, []string{"say", "hangup"}) || !slices.Contains(kinds(r), "ws.close 1006") {
		t.Fatalf("verbs %v timeline %v", r.Verbs, kinds(r))
	}
}

// docs/call-control.md §4: with pings on, an app that stops answering pongs counts as
// dropped: the call, waiting for a command, reconnects, and the session:reconnect ack's
// verbs end it.
func TestWSMissedPongsAreADrop(t *testing.T) {
	waitsOutATimeout(t)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	srv, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.ack(s.next("session:new"), map[string]any{"verb": "answer"})
			<-stop // stops reading: pings go unanswered
			return
		}
		s.ack(s.next("session:reconnect"), hangupVerb)
		s.drain()
	})
	o := baseOptions(t, url)
	// Generous: a reading peer has two whole seconds to answer each ping.
	o.WebSocket.PingInterval = time.Second
	o.IdleLimit = time.Minute // the call waits for a command until the drop
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if srv.conns.Load() != 2 || len(kinds(r, callctl.KindWSReconnect)) != 1 {
		t.Fatalf("timeline %v", kinds(r))
	}
}

// silentListener accepts TCP connections and never answers: every WebSocket
// handshake to it times out. Each channel gets a value per connection accepted: one
// for the test to count them, one for testkit.CancelAfterArrival.
func silentListener(t *testing.T) (url string, accepted, reached <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	acceptedCh, reachedCh := make(chan struct{}, 64), make(chan struct{}, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			acceptedCh <- struct{}{}
			reachedCh <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "ws://" + ln.Addr().String(), acceptedCh, reachedCh
}

// docs/call-control.md §1, §6: the initial connection failing. Refused connections are
// retried rc times (default 5) with the ramp; a handshake timeout only under an explicit
// rp with ct. The call fails, with the alert, and nothing is sent.
func TestWSInitialConnectFails(t *testing.T) {
	refused := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		return "ws://" + addr
	}
	t.Run("refused, default rc=5", func(t *testing.T) {
		r := run(t, baseOptions(t, refused()))
		wantEnd(t, r, callctl.StatusFailed, callctl.ReasonConnectFailed, 480)
		if attempts(r) != 6 {
			t.Fatalf("%d attempts, want 6", attempts(r))
		}
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 6 * time.Second}
		if got := retryDelays(r); !slices.Equal(got, want) {
			t.Fatalf("delays %v", got)
		}
		if r.Duration < 13500*time.Millisecond {
			t.Fatalf("simulated time to failure %v, want at least 13.5 s", r.Duration)
		}
		if !hasAlert(r, callctl.AlertWebhookConnectionFailure) || len(kinds(r, callctl.KindMsgSent)) != 0 {
			t.Fatalf("timeline %v", kinds(r))
		}
	})
	t.Run("refused, rc=0", func(t *testing.T) {
		r := run(t, baseOptions(t, refused()+"#rc=0"))
		wantEnd(t, r, callctl.StatusFailed, callctl.ReasonConnectFailed, 480)
		if attempts(r) != 1 {
			t.Fatalf("%d attempts", attempts(r))
		}
	})
	for _, tc := range []struct {
		frag string
		want int
	}{{"", 1}, {"#rc=2&rp=ct", 3}, {"#rc=2&rp=all", 3}, {"#rc=2&rp=5xx", 1}} {
		t.Run("handshake timeout "+tc.frag, func(t *testing.T) {
			url, accepted, reached := silentListener(t)
			o := baseOptions(t, url+tc.frag)
			o.WebSocket.HandshakeTimeout = 50 * time.Millisecond
			// The handshake's timeout is real and short: it reaches the upgrade only once
			// the listener has accepted its connection, so that every attempt counted
			// below reaches the listener however slowly the machine runs.
			client := *o.WebSocket.HTTPClient
			client.Transport = testkit.CancelAfterArrival(client.Transport, reached)
			o.WebSocket.HTTPClient = &client
			o.WebhookErrorReturn = 503
			r := run(t, o)
			wantEnd(t, r, callctl.StatusFailed, callctl.ReasonConnectFailed, 503)
			if attempts(r) != tc.want {
				t.Fatalf("%d attempts, want %d", attempts(r), tc.want)
			}
			// Every attempt reached the listener (its goroutine may lag behind).
			for i := range tc.want {
				select {
				case <-accepted:
				case <-time.After(10 * time.Second):
					t.Fatalf("the listener accepted %d connections, want %d", i, tc.want)
				}
			}
			select {
			case <-accepted:
				t.Fatalf("the listener accepted more than %d connections", tc.want)
			default:
			}
			if c := r.Timeline[2].Class; !strings.Contains(c, "handshake") {
				t.Fatalf("class %q", c)
			}
		})
	}
}

// docs/call-control.md §4: until session:reconnect is acked nothing else is sent. The
// jambonz:error an invalid message earns meanwhile goes out after the ack, and a command
// that arrives meanwhile is applied after it.
func TestWSNothingSentBeforeReconnectAck(t *testing.T) {
	waitsOutATimeout(t)
	srv, url := newWS(t, func(s *wsSession) {
		if s.n == 1 {
			s.ack(s.next("session:new"), map[string]any{"verb": "gather", "actionHook": "/g"})
			s.next("verb:hook")
			_ = s.conn.Close(websocket.StatusInternalError, "crash")
			return
		}
		rc := s.next("session:reconnect")
		s.raw("not json")
		s.send(map[string]any{"type": "command", "command": "redirect", "data": []map[string]any{say("after"), hangupVerb}})
		s.ack(rc)
		s.drain()
	})
	o := baseOptions(t, url)
	o.Script.Gathers = []callctl.GatherInput{{Digits: "1"}}
	o.AckTimeout = time.Second // the verb:hook sent before the drop is never acked
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	got := strings.Join(kinds(r, callctl.KindMsgSent, callctl.KindMsgRecv), ",")
	want := "msg.sent session:reconnect,msg.recv invalid,msg.recv command,msg.recv ack,msg.sent jambonz:error"
	if !strings.Contains(got, want) {
		t.Errorf("messages\n%s\nwant in order\n%s", got, want)
	}
	if !slices.Equal(r.Verbs, []string{"gather", "say", "hangup"}) {
		t.Errorf("verbs %v: the command held until the ack must still apply", r.Verbs)
	}
	// One for the invalid message; the gather's unacked hook earns its own
	// ("invalid actionHook response", as jambonz's gather sends).
	invalid := 0
	for _, e := range srv.find("jambonz:error") {
		if e["data"].(map[string]any)["msg"] == "InvalidMessage" {
			invalid++
		}
	}
	if invalid != 1 {
		t.Errorf("app got %d InvalidMessage jambonz:error, want 1", invalid)
	}
}
