package wsclient

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

const testPingInterval = 50 * time.Millisecond

// TestKeepaliveMissedPongs: a server that never reads never answers pings; after two
// intervals without a pong the connection counts as dropped.
func TestKeepaliveMissedPongs(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) { <-ctx.Done() })
	start := time.Now()
	conn := dialServer(t, s.URL, func(o *Options) { o.PingInterval = testPingInterval })
	_, err := readCtx(t, conn)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrDropped) || !errors.Is(err, ErrPongTimeout) {
		t.Fatalf("err = %v, want a drop for missed pongs", err)
	}
	// Pings go out at 1 and 2 intervals, each waits one interval: the drop comes at
	// about 3 intervals. Generous bounds.
	if elapsed < 2*testPingInterval || elapsed > 5*time.Second {
		t.Errorf("dropped after %v, want about %v", elapsed, 3*testPingInterval)
	}
	if err := conn.Write(context.Background(), []byte("x")); !errors.Is(err, ErrPongTimeout) {
		t.Errorf("Write after the drop: %v", err)
	}
}

// TestKeepaliveAnswered: a server that reads answers pings and the connection lives.
// It runs in a synctest bubble on an in-memory network: a pong takes no time on the
// bubble's clock, where on loopback a loaded machine could delay two in a row by a
// whole interval and drop the connection.
func TestKeepaliveAnswered(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var pings atomic.Int64
		pipes := transporttest.NewPipes()
		s := newWSServerOn(t, pipes, &websocket.AcceptOptions{
			Subprotocols:   []string{Subprotocol},
			OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true },
		}, func(ctx context.Context, c *websocket.Conn) {
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
		})
		const interval = 4 * testPingInterval
		conn := dialServer(t, s.URL, func(o *Options) { o.PingInterval = interval; o.HTTPClient = pipeClient(t, pipes) })
		ctx, cancel := context.WithTimeout(context.Background(), 8*interval)
		defer cancel()
		if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the Read to time out on a live connection", err)
		}
		if n := pings.Load(); n < 3 {
			t.Errorf("server saw %d pings in 8 intervals, want several", n)
		}
		if err := conn.Write(context.Background(), []byte("still here")); err != nil {
			t.Errorf("Write: %v", err)
		}
	})
}

// TestKeepaliveOff: with PingInterval 0 nothing is sent and a silent peer is not
// taken for a dead one.
func TestKeepaliveOff(t *testing.T) {
	t.Parallel()
	var pings atomic.Int64
	s := newAcceptingServer(t, &websocket.AcceptOptions{
		Subprotocols:   []string{Subprotocol},
		OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true },
	})
	conn := dialServer(t, s.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 6*testPingInterval)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timed-out Read", err)
	}
	if n := pings.Load(); n != 0 {
		t.Errorf("server saw %d pings with keepalive off", n)
	}
}
