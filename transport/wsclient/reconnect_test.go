package wsclient

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/retry"
)

// TestReconnectEpisodes: the reconnect rules of docs/call-control.md §4: rc attempts per
// episode, the ramp before each one, every connection failure class retried (the
// handshake timeout too, even under the default policy), 4xx only under rp 4xx/all.
func TestReconnectEpisodes(t *testing.T) {
	t.Parallel()
	silent, refused := silentPolicyServer(), refusedPolicyServer()
	status := func(code int) policyServer { return statusPolicyServer(code, "") }
	tests := []struct {
		name     string
		server   policyServer
		fragment string
		delays   []time.Duration // one wait before each attempt
	}{
		{"refused, default rc=5", refused, "", seconds(0.5, 1, 2, 4, 6)},
		{"refused, rc=3", refused, "#rc=3", seconds(0.5, 1, 2)},
		{"refused, rc=2 and rp=4xx: ct still retried", refused, "#rc=2&rp=4xx", seconds(0.5, 1)},
		{"handshake timeout, default policy: retried", silent, "", seconds(0.5, 1, 2, 4, 6)},
		{"handshake timeout, rc=1", silent, "#rc=1", seconds(0.5)},
		{"403, default policy: not retried", status(403), "#rc=3", seconds(0.5)},
		{"403, rp=4xx: retried", status(403), "#rc=3&rp=4xx", seconds(0.5, 1, 2)},
		{"403, rp=all: retried", status(403), "#rc=2&rp=all", seconds(0.5, 1)},
		{"503, default policy: retried", status(503), "#rc=2", seconds(0.5, 1)},
		{"302, default policy: not retried", status(302), "#rc=2", seconds(0.5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url, seen, rec, opts := tt.server.start(t)
			r, err := NewReconnector(mustTarget(t, url+tt.fragment), opts)
			if err != nil {
				t.Fatal(err)
			}
			for episode := 1; episode <= 2; episode++ {
				_, err := r.Next(context.Background())
				var de *DialError
				if !errors.As(err, &de) || de.Class != tt.server.class {
					t.Fatalf("episode %d: err = %v, want a DialError of class %s", episode, err, tt.server.class)
				}
				if len(de.Attempts) != len(tt.delays) {
					t.Errorf("episode %d: %d attempts, want %d", episode, len(de.Attempts), len(tt.delays))
				}
				// The ramp restarts at 0.5 s for every episode.
				want := slices.Concat(tt.delays, tt.delays)[:episode*len(tt.delays)]
				if got := rec.Delays(); !slices.Equal(got, want) {
					t.Errorf("episode %d: waits = %v, want %v", episode, got, want)
				}
			}
			if n := seen(int64(2 * len(tt.delays))); n != -1 && n != int64(2*len(tt.delays)) {
				t.Errorf("server saw %d connections in two episodes, want %d", n, 2*len(tt.delays))
			}
			if r.Episodes() != 2 {
				t.Errorf("Episodes() = %d", r.Episodes())
			}
		})
	}
}

func TestReconnectNoBudget(t *testing.T) {
	t.Parallel()
	s := newAcceptingServer(t, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	rec := &testkit.SleepRecorder{}
	r, err := NewReconnector(mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"#rc=0"), testOptions(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next(context.Background())
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, ErrNoReconnectBudget) || len(de.Attempts) != 0 {
		t.Fatalf("err = %v, want ErrNoReconnectBudget without attempts", err)
	}
	if len(rec.Delays()) != 0 || s.requests.Load() != 0 {
		t.Errorf("waited %v, server saw %d requests", rec.Delays(), s.requests.Load())
	}
}

func TestReconnectSucceeds(t *testing.T) {
	t.Parallel()
	s := newStatusServer(t, 503, 1, "")
	rec := &testkit.SleepRecorder{}
	r, err := NewReconnector(mustTarget(t, "ws"+strings.TrimPrefix(s.URL, "http")+"#rc=3"), testOptions(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(1000, "")
	if got, want := rec.Delays(), seconds(0.5, 1); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	if err := conn.Write(context.Background(), []byte(`{"type":"session:reconnect"}`)); err != nil {
		t.Errorf("Write on the new connection: %v", err)
	}
}

func TestReconnectEgressRefused(t *testing.T) {
	t.Parallel()
	s, url, _ := newSilentListener(t)
	rec := &testkit.SleepRecorder{}
	r, err := NewReconnector(mustTarget(t, url+"#rc=4&rp=all"), Options{Sleep: rec.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next(context.Background())
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.EgressRefused || len(de.Attempts) != 1 {
		t.Fatalf("err = %v, want one refused attempt", err)
	}
	s.AssertNothingArrived(t)
}

func TestReconnectCanceled(t *testing.T) {
	t.Parallel()
	r, err := NewReconnector(mustTarget(t, closedPortURL(t)), testOptions(t, &testkit.SleepRecorder{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Next(ctx)
	var de *DialError
	if !errors.As(err, &de) || de.Class != retry.Canceled || !errors.Is(err, context.Canceled) || len(de.Attempts) != 0 {
		t.Fatalf("err = %v, want canceled before the first attempt", err)
	}
}
