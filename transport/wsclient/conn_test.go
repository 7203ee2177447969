package wsclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// dialServer opens a Conn to s with the test options changed by tweak.
func dialServer(t *testing.T, serverURL string, tweak func(*Options)) *Conn {
	t.Helper()
	opts := testOptions(t, &testkit.SleepRecorder{})
	if tweak != nil {
		tweak(&opts)
	}
	conn, err := Dial(context.Background(), mustTarget(t, "ws"+strings.TrimPrefix(serverURL, "http")+"#rc=0"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(1000, "test over") })
	return conn
}

func readCtx(t *testing.T, c *Conn) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Read(ctx)
}

func TestConnEcho(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if c.Write(ctx, typ, b) != nil {
				return
			}
		}
	})
	conn := dialServer(t, s.URL, nil)
	for _, msg := range []string{`{"type":"ack","msgid":"1"}`, "", strings.Repeat("x", 10000)} {
		if err := conn.Write(context.Background(), []byte(msg)); err != nil {
			t.Fatal(err)
		}
		got, err := readCtx(t, conn)
		if err != nil || string(got) != msg {
			t.Fatalf("echo of %d bytes: got %d bytes, err %v", len(msg), len(got), err)
		}
	}
}

// TestConnMessageLimits: binary frames and messages over MaxPayload are reported and
// discarded, and the connection goes on: the next message is still readable.
func TestConnMessageLimits(t *testing.T) {
	t.Parallel()
	exact := strings.Repeat("a", DefaultMaxPayload)
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, []byte{1, 2, 3})
		c.Write(ctx, websocket.MessageText, []byte(exact+"b"))
		c.Write(ctx, websocket.MessageText, []byte(exact))
		c.Write(ctx, websocket.MessageBinary, bytes.Repeat([]byte{0}, 3*DefaultMaxPayload))
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"command"}`))
		<-c.CloseRead(ctx).Done()
	})
	conn := dialServer(t, s.URL, nil) // MaxPayload defaults to 24576
	if _, err := readCtx(t, conn); !errors.Is(err, ErrBinaryFrame) {
		t.Errorf("binary message: err = %v, want ErrBinaryFrame", err)
	}
	_, err := readCtx(t, conn)
	if !errors.Is(err, ErrMessageTooLarge) || errors.Is(err, ErrDropped) {
		t.Errorf("24577 bytes: err = %v, want ErrMessageTooLarge without a drop", err)
	}
	if !strings.Contains(fmt.Sprint(err), "24577 bytes") {
		t.Errorf("error %q does not give the size", err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != exact {
		t.Errorf("24576 bytes: got %d bytes, err %v", len(got), err)
	}
	if _, err := readCtx(t, conn); !errors.Is(err, ErrBinaryFrame) {
		t.Errorf("large binary message: err = %v, want ErrBinaryFrame", err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != `{"type":"command"}` {
		t.Errorf("message after the discarded ones: %q, %v", got, err)
	}
}

// TestConnHardCap: a message beyond HardCapFactor × MaxPayload ends the connection
// with 1009 instead of being read forever.
func TestConnHardCap(t *testing.T) {
	t.Parallel()
	closed := make(chan websocket.StatusCode, 1)
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("x"), 100*HardCapFactor+1))
		_, _, err := c.Read(ctx)
		closed <- websocket.CloseStatus(err)
	})
	conn := dialServer(t, s.URL, func(o *Options) { o.MaxPayload = 100 })
	_, err := readCtx(t, conn)
	if !errors.Is(err, ErrDropped) || !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("err = %v, want a drop caused by a too large message", err)
	}
	if code := <-closed; code != websocket.StatusMessageTooBig {
		t.Errorf("server saw close status %v, want 1009", code)
	}
}

func TestConnPeerClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code       websocket.StatusCode
		wantNormal bool
	}{
		{websocket.StatusNormalClosure, true},
		{websocket.StatusInternalError, false},
		{websocket.StatusGoingAway, false},
		{4000, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(int(tt.code)), func(t *testing.T) {
			t.Parallel()
			s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
				c.Write(ctx, websocket.MessageText, []byte("last"))
				c.Close(tt.code, "bye")
			})
			conn := dialServer(t, s.URL, nil)
			if got, err := readCtx(t, conn); err != nil || string(got) != "last" {
				t.Fatalf("message before the close: %q, %v", got, err)
			}
			_, err := readCtx(t, conn)
			if errors.Is(err, ErrNormalClosure) != tt.wantNormal || errors.Is(err, ErrDropped) == tt.wantNormal {
				t.Errorf("err = %v: normal %v, dropped %v; want normal %v", err,
					errors.Is(err, ErrNormalClosure), errors.Is(err, ErrDropped), tt.wantNormal)
			}
			if got := CloseStatus(err); got != int(tt.code) {
				t.Errorf("CloseStatus = %d, want %d", got, tt.code)
			}
			// The end is sticky, and writes report it too.
			if _, err2 := readCtx(t, conn); !errors.Is(err2, ErrDropped) && !errors.Is(err2, ErrNormalClosure) {
				t.Errorf("second Read: %v", err2)
			}
			if err := conn.Write(context.Background(), []byte("x")); err == nil {
				t.Error("Write after the peer closed succeeded")
			}
		})
	}
}

func TestConnAbruptDrop(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		writeFrame(rw, true, opText, []byte("hello"))
		// Return: the socket is closed without a close frame.
	})
	conn := dialServer(t, s.URL, nil)
	if got, err := readCtx(t, conn); err != nil || string(got) != "hello" {
		t.Fatalf("first message: %q, %v", got, err)
	}
	_, err := readCtx(t, conn)
	if !errors.Is(err, ErrDropped) || CloseStatus(err) != -1 {
		t.Errorf("err = %v (status %d), want a drop without close status", err, CloseStatus(err))
	}
}

// TestConnReadContext: a Read that gives up leaves the connection open.
func TestConnReadContext(t *testing.T) {
	t.Parallel()
	send := make(chan struct{})
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		select {
		case <-send:
		case <-ctx.Done():
			return
		}
		c.Write(ctx, websocket.MessageText, []byte("late"))
		<-c.CloseRead(ctx).Done()
	})
	conn := dialServer(t, s.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := conn.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	close(send)
	if got, err := readCtx(t, conn); err != nil || string(got) != "late" {
		t.Errorf("after a timed-out Read: %q, %v", got, err)
	}
}

func TestConnLocalClose(t *testing.T) {
	t.Parallel()
	type closeSeen struct {
		code   websocket.StatusCode
		reason string
	}
	seen := make(chan closeSeen, 1)
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		_, _, err := c.Read(ctx)
		var ce websocket.CloseError
		errors.As(err, &ce)
		seen <- closeSeen{ce.Code, ce.Reason}
	})
	conn := dialServer(t, s.URL, nil)
	if err := conn.Close(1001, "session:new failed"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := <-seen; got.code != websocket.StatusGoingAway || got.reason != "session:new failed" {
		t.Errorf("server saw %+v", got)
	}
	if _, err := readCtx(t, conn); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
	if err := conn.Write(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := conn.Close(1000, ""); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestConnConcurrentWrites: writers on many goroutines never interleave frames.
func TestConnConcurrentWrites(t *testing.T) {
	t.Parallel()
	const writers, each = 8, 50
	got := make(chan map[string]int, 1)
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		seen := map[string]int{}
		for range writers * each {
			_, b, err := c.Read(ctx)
			if err != nil {
				break
			}
			seen[string(b)]++
		}
		got <- seen
		<-c.CloseRead(ctx).Done()
	})
	conn := dialServer(t, s.URL, nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				msg := fmt.Sprintf("%d-%d-%s", w, i, strings.Repeat("p", 1000*(i%5)))
				if err := conn.Write(context.Background(), []byte(msg)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	seen := <-got
	if len(seen) != writers*each {
		t.Fatalf("server got %d distinct messages, want %d", len(seen), writers*each)
	}
	for m, n := range seen {
		if n != 1 {
			t.Errorf("message %.10q seen %d times", m, n)
		}
	}
}

// TestConnCloseAfterDrop: Close releases a connection that already dropped.
func TestConnCloseAfterDrop(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, func(*http.Request, net.Conn, *bufio.ReadWriter) {})
	conn := dialServer(t, s.URL, nil)
	if _, err := readCtx(t, conn); !errors.Is(err, ErrDropped) {
		t.Fatalf("err = %v, want a drop", err)
	}
	if err := conn.Close(1000, ""); err != nil {
		t.Errorf("Close after a drop: %v", err)
	}
	if _, err := readCtx(t, conn); !errors.Is(err, ErrDropped) {
		t.Errorf("Read after Close keeps the drop cause: %v", err)
	}
}

// TestConnWriteTimeout: a write that cannot finish before its context ends closes
// the connection (coder/websocket cannot abandon half a frame) and Read reports the
// drop.
func TestConnWriteTimeout(t *testing.T) {
	t.Parallel()
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) { <-ctx.Done() })
	conn := dialServer(t, s.URL, nil)
	big := bytes.Repeat([]byte("x"), 4<<20)
	var err error
	for range 64 { // the socket buffers fill up after a few messages
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err = conn.Write(ctx, big)
		cancel()
		if err != nil {
			break
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrDropped) {
		t.Fatalf("Write: %v, want a drop caused by the deadline", err)
	}
	if _, err := readCtx(t, conn); !errors.Is(err, ErrDropped) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Read after the failed write: %v", err)
	}
}
