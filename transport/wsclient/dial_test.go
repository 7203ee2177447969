package wsclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// TestDialPolicyRows: every WebSocket row of docs/call-control.md §1–2, against real
// loopback servers: attempts made (counted by us and by the server), class of the
// failure and the exact waits between attempts.
func TestDialPolicyRows(t *testing.T) {
	t.Parallel()
	silent, refused := silentPolicyServer(), refusedPolicyServer()
	status := func(code int) policyServer { return statusPolicyServer(code, "/ws") }
	noSubprotocol := policyServer{func(t *testing.T) (string, func(int64) int64) {
		s := newWSServer(t, true, func(ctx context.Context, c *websocket.Conn) { c.CloseRead(ctx) })
		return "ws" + strings.TrimPrefix(s.URL, "http") + "/ws", loaded(&s.requests)
	}, retry.Unparseable}
	bogusUpgrade := policyServer{func(t *testing.T) (string, func(int64) int64) {
		s, n := newBogusUpgradeServer(t)
		return "ws" + strings.TrimPrefix(s.URL, "http"), loaded(n)
	}, retry.Unparseable}

	tests := []struct {
		name     string
		server   policyServer
		fragment string
		delays   []time.Duration // waits recorded; attempts = len+1
	}{
		{"handshake timeout, default policy: one attempt", silent, "", nil},
		{"handshake timeout, rc=3&rp=ct: retried", silent, "#rc=3&rp=ct", seconds(0.5, 1, 2)},
		{"handshake timeout, rc=2&rp=all: retried", silent, "#rc=2&rp=all", seconds(0.5, 1)},
		{"handshake timeout, rc=3 without rp: default rp, not retried", silent, "#rc=3", nil},
		{"handshake timeout, rp=5xx only: not retried", silent, "#rc=3&rp=5xx", nil},
		{"handshake timeout, rc=0&rp=ct: no retry", silent, "#rc=0&rp=ct", nil},
		{"handshake timeout, rc=9 capped at 5", silent, "#rc=9&rp=ct", seconds(0.5, 1, 2, 4, 6)},
		{"refused, default policy rc=5 rp=ct", refused, "", seconds(0.5, 1, 2, 4, 6)},
		{"refused, rc=0", refused, "#rc=0", nil},
		{"refused, rc=2&rp=ct", refused, "#rc=2&rp=ct", seconds(0.5, 1)},
		{"refused, rp=5xx: ct not covered", refused, "#rc=2&rp=5xx", nil},
		{"403, default policy: not retried", status(403), "", nil},
		{"403, rp=4xx: retried", status(403), "#rc=2&rp=4xx", seconds(0.5, 1)},
		{"429 counts as 4xx", status(429), "#rc=1&rp=4xx", seconds(0.5)},
		{"403, rp=5xx: not retried", status(403), "#rc=2&rp=5xx", nil},
		{"503, default policy: not retried", status(503), "", nil},
		{"503, rp=5xx: retried", status(503), "#rc=3&rp=5xx", seconds(0.5, 1, 2)},
		{"503, rp=4xx: not retried", status(503), "#rc=3&rp=4xx", nil},
		{"500, rp=all: retried", status(500), "#rc=1&rp=all", seconds(0.5)},
		{"302, rp=4xx,5xx: not followed, not retried", status(302), "#rc=2&rp=4xx,5xx", nil},
		{"302, rp=all: retried", status(302), "#rc=2&rp=all", seconds(0.5, 1)},
		{"no subprotocol selected, default policy: not retried", noSubprotocol, "", nil},
		{"no subprotocol selected, rp=all: retried", noSubprotocol, "#rc=1&rp=all", seconds(0.5)},
		{"101 with a wrong accept key, rp=ct: not retried", bogusUpgrade, "#rc=2&rp=ct", nil},
		{"101 with a wrong accept key, rp=all: retried", bogusUpgrade, "#rc=2&rp=all", seconds(0.5, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, seen, rec, opts := tt.server.start(t)
			var observed []Attempt
			opts.Observer = func(a Attempt) { observed = append(observed, a) }
			conn, err := Dial(context.Background(), mustTarget(t, url+tt.fragment), opts)
			if err == nil {
				conn.Close(1000, "")
				t.Fatal("Dial succeeded, want a failure")
			}
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *DialError", err, err)
			}
			wantAttempts := len(tt.delays) + 1
			if len(de.Attempts) != wantAttempts || len(observed) != wantAttempts {
				t.Fatalf("attempts = %d (observed %d), want %d: %v", len(de.Attempts), len(observed), wantAttempts, err)
			}
			if n := seen(int64(wantAttempts)); n != -1 && n != int64(wantAttempts) {
				t.Errorf("server saw %d connections, want %d", n, wantAttempts)
			}
			if got := rec.Delays(); !slices.Equal(got, tt.delays) {
				t.Errorf("waits = %v, want %v", got, tt.delays)
			}
			if de.Class != tt.server.class {
				t.Errorf("class = %q, want %q (%v)", de.Class, tt.server.class, err)
			}
			for i, a := range de.Attempts {
				wantDelay := time.Duration(0)
				if i > 0 {
					wantDelay = tt.delays[i-1]
				}
				if a.Number != i+1 || a.Class != tt.server.class || a.Err == nil || a.DelayBefore != wantDelay {
					t.Errorf("attempt %d = %+v", i+1, a)
				}
			}
		})
	}
}

func TestDialStatusReported(t *testing.T) {
	t.Parallel()
	s := newStatusServer(t, 403, -1, "")
	var logs bytes.Buffer
	opts := testOptions(t, &testkit.SleepRecorder{})
	opts.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	_, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")), opts)
	for _, line := range []string{`"message":"websocket attempt failed"`, `"status":403`, `"message":"websocket connection failed"`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("log lacks %s:\n%s", line, logs.String())
		}
	}
	var de *DialError
	if !errors.As(err, &de) || de.Status != 403 || de.Attempts[0].Status != 403 {
		t.Fatalf("err = %v, want a DialError with status 403", err)
	}
	if !strings.Contains(err.Error(), "403") {
		t.Errorf("message %q does not name the status", err)
	}
}

func TestDialRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	target := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) { reached.Add(1) })
	s := newStatusServer(t, http.StatusFound, -1, target.URL)
	_, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"#rp=all&rc=1"), testOptions(t, &testkit.SleepRecorder{}))
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.Redirect || de.Status != http.StatusFound {
		t.Fatalf("err = %v, want class redirect with status 302", err)
	}
	if n := target.requests.Load(); n != 0 {
		t.Errorf("redirect target got %d requests, want 0", n)
	}
}

func TestDialSucceedsAfterRetries(t *testing.T) {
	t.Parallel()
	s := newStatusServer(t, 503, 2, "")
	rec := &testkit.SleepRecorder{}
	var observed []Attempt
	opts := testOptions(t, rec)
	opts.Observer = func(a Attempt) { observed = append(observed, a) }
	conn, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"#rc=3&rp=5xx"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(1000, "")
	if got, want := rec.Delays(), seconds(0.5, 1); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	classes := []retry.Class{}
	for _, a := range observed {
		classes = append(classes, a.Class)
	}
	if want := []retry.Class{retry.Status5xx, retry.Status5xx, retry.Success}; !slices.Equal(classes, want) {
		t.Errorf("classes = %v, want %v", classes, want)
	}
	if last := observed[len(observed)-1]; last.Status != http.StatusSwitchingProtocols || last.Err != nil {
		t.Errorf("last attempt = %+v, want status 101 and no error", last)
	}
}

func TestDialHandshake(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		got <- c.Subprotocol()
		<-c.CloseRead(ctx).Done()
	})
	t.Run("defaults", func(t *testing.T) {
		opts := testOptions(t, &testkit.SleepRecorder{})
		conn, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/app?x=1#rc=1&foo=bar"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(1000, "")
		if sp := <-got; sp != Subprotocol || conn.Subprotocol() != Subprotocol {
			t.Errorf("subprotocol: server %q, client %q", sp, conn.Subprotocol())
		}
		h := s.header(0)
		if ua := h.Get("User-Agent"); ua != "jambonz" {
			t.Errorf("User-Agent = %q, want jambonz", ua)
		}
		if p := h.Get("Sec-WebSocket-Protocol"); p != Subprotocol {
			t.Errorf("offered subprotocols %q", p)
		}
	})
	t.Run("user agent and basic auth", func(t *testing.T) {
		opts := testOptions(t, &testkit.SleepRecorder{})
		opts.UserAgent = "switchboard/1"
		req, _ := http.NewRequest("GET", "/", nil)
		req.SetBasicAuth("user", "secret")
		opts.Header = req.Header
		conn, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(1000, "")
		<-got
		h := s.header(1)
		if ua := h.Get("User-Agent"); ua != "switchboard/1" {
			t.Errorf("User-Agent = %q", ua)
		}
		r := &http.Request{Header: h}
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "secret" {
			t.Errorf("basic auth = %q %q %v", u, p, ok)
		}
		if len(opts.Header.Values("User-Agent")) != 0 {
			t.Error("Dial modified the caller's Header")
		}
	})
}

func TestDialAttemptTimes(t *testing.T) {
	t.Parallel()
	opts := testOptions(t, &testkit.SleepRecorder{})
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := testkit.NewClockAt(epoch.Add(time.Second)) // one second further at every reading
	clock.SetStep(time.Second)
	opts.Clock = clock
	_, err := Dial(context.Background(), mustTarget(t, closedPortURL(t)+"#rc=1"), opts)
	var de *DialError
	if !errors.As(err, &de) || len(de.Attempts) != 2 {
		t.Fatalf("err = %v, want two attempts", err)
	}
	for i, a := range de.Attempts {
		if want := epoch.Add(time.Duration(2*i+1) * time.Second); !a.Start.Equal(want) || a.Duration != time.Second {
			t.Errorf("attempt %d: start %v duration %v, want %v and 1s", i+1, a.Start, a.Duration, want)
		}
	}
}

func TestDialHandshakeBounded(t *testing.T) {
	t.Parallel()
	_, url, _ := newSilentListener(t)
	opts := testOptions(t, &testkit.SleepRecorder{})
	opts.HandshakeTimeout = shortHandshake
	start := time.Now()
	_, err := Dial(context.Background(), mustTarget(t, url), opts)
	elapsed := time.Since(start)
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.HandshakeTimeout {
		t.Fatalf("err = %v, want a handshake timeout", err)
	}
	if elapsed < 100*time.Millisecond || elapsed > 5*time.Second {
		t.Errorf("Dial took %v, want about the 100ms handshake timeout", elapsed)
	}
	if d := de.Attempts[0].Duration; d < 100*time.Millisecond {
		t.Errorf("attempt duration %v is shorter than the timeout", d)
	}
	if !strings.Contains(err.Error(), "100ms") {
		t.Errorf("message %q does not say the handshake timed out", err)
	}
}

// TestDialEgressRefused: the default client is the call-control egress client, which
// refuses loopback: no connection is made and the refusal is never retried.
func TestDialEgressRefused(t *testing.T) {
	t.Parallel()
	s, url, _ := newSilentListener(t)
	rec := &testkit.SleepRecorder{}
	_, err := Dial(context.Background(), mustTarget(t, url+"#rc=5&rp=all"), Options{Sleep: rec.Sleep})
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.EgressRefused || len(de.Attempts) != 1 {
		t.Fatalf("err = %v, want one egress-refused attempt", err)
	}
	if len(rec.Delays()) != 0 {
		t.Errorf("waited %v before retrying a refusal", rec.Delays())
	}
	s.AssertNothingArrived(t)
}

func TestDialCanceled(t *testing.T) {
	t.Parallel()
	url := closedPortURL(t)
	t.Run("while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		opts := testOptions(t, nil)
		opts.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return transport.Sleep(ctx, d) }
		_, err := Dial(ctx, mustTarget(t, url), opts)
		var de *DialError
		if !errors.As(err, &de) || de.Class != retry.Canceled || !errors.Is(err, context.Canceled) || len(de.Attempts) != 1 {
			t.Fatalf("err = %v, want canceled after one attempt", err)
		}
	})
	t.Run("during the handshake", func(t *testing.T) {
		_, url, _ := newSilentListener(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		opts := testOptions(t, &testkit.SleepRecorder{})
		opts.HandshakeTimeout = 5 * time.Second
		_, err := Dial(ctx, mustTarget(t, url+"#rc=3&rp=ct"), opts)
		var de *DialError
		if !errors.As(err, &de) || de.Class != retry.Canceled || len(de.Attempts) != 1 {
			t.Fatalf("err = %v, want canceled during the first attempt", err)
		}
	})
}

func TestDialBadInput(t *testing.T) {
	t.Parallel()
	rec := &testkit.SleepRecorder{}
	_, err := Dial(context.Background(), mustTarget(t, "https://127.0.0.1/hook"), testOptions(t, rec))
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.Permanent || !errors.Is(err, fragment.ErrInvalidURL) || len(de.Attempts) != 0 {
		t.Errorf("http target: err = %v, want a permanent invalid-URL error and no attempt", err)
	}
	_, err = Dial(context.Background(), fragment.Target{}, testOptions(t, rec))
	if !errors.Is(err, fragment.ErrInvalidURL) {
		t.Errorf("empty target: err = %v", err)
	}
	for _, o := range []Options{{HandshakeTimeout: -1}, {MaxPayload: -1}, {MaxPayload: MaxMaxPayload + 1}, {PingInterval: -time.Second}} {
		if _, err := Dial(context.Background(), mustTarget(t, "ws://127.0.0.1:1"), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("options %+v: err = %v, want ErrInvalidOptions", o, err)
		}
		if _, err := NewReconnector(mustTarget(t, "ws://127.0.0.1:1"), o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewReconnector options %+v: err = %v, want ErrInvalidOptions", o, err)
		}
	}
}

// TestDialRefusedUpgradeBoundedByHandshakeTimeout: a 101 the client must refuse, from
// a server that then keeps the connection open, ends the attempt at the handshake
// timeout (coder/websocket alone would read on for 3 s), classed as unparseable,
// not as a timeout.
func TestDialRefusedUpgradeBoundedByHandshakeTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var held sync.WaitGroup
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveHijacked(w, &held, func(_ net.Conn, rw *bufio.ReadWriter) {
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Protocol: other.proto\r\nSec-WebSocket-Accept: bogus\r\n\r\n")
			rw.Flush()
			<-release
		})
	}))
	t.Cleanup(func() { close(release); held.Wait(); s.Close() })
	opts := testOptions(t, &testkit.SleepRecorder{})
	opts.HandshakeTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws"), opts)
	elapsed := time.Since(start)
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.Unparseable || strings.Contains(err.Error(), "not completed within") {
		t.Fatalf("err = %v, want an unparseable upgrade", err)
	}
	if elapsed > 2*time.Second {
		t.Errorf("Dial took %v with a 200ms handshake timeout", elapsed)
	}
}
