package wsclient

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/transport"
)

// deadlineSpy is the client's socket, telling when a read deadline in the past (an
// interrupt) was lifted again: the interrupted read has been dealt with.
type deadlineSpy struct {
	net.Conn
	mu     sync.Mutex
	past   bool
	lifted chan struct{} // one value a lift after a past deadline
}

func (c *deadlineSpy) SetReadDeadline(t time.Time) error {
	err := c.Conn.SetReadDeadline(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !t.IsZero() && t.Before(time.Now()):
		c.past = true
	case t.IsZero() && c.past:
		c.past = false
		select {
		case c.lifted <- struct{}{}:
		default:
		}
	}
	return err
}

// spiedClient is loopbackClient whose connections are deadlineSpies, sent on conns.
func spiedClient(t *testing.T, conns chan<- *deadlineSpy) *http.Client {
	t.Helper()
	c := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{
		DisableKeepAlives: true,
		Connect: func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			nc, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			spy := &deadlineSpy{Conn: nc, lifted: make(chan struct{}, 1)}
			conns <- spy
			return spy, nil
		},
	})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestConnReadCutInsideControlFrame: a wait cut short while a ping is half received
// (the rest of it on its way) reads the ping to its end and answers it, then ends:
// a ping is no message to return, so the cut must still count at the next frame
// boundary, not wait for whatever data message comes next (for an idle application,
// never).
func TestConnReadCutInsideControlFrame(t *testing.T) {
	t.Parallel()
	pong := make(chan []byte, 2)
	more := make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		// A whole ping, and the first byte of the next one's payload.
		rw.Write([]byte{0x80 | opPing, 2, 'p', '1', 0x80 | opPing, 4, 'a'})
		if rw.Flush() != nil {
			return
		}
		pong <- readClientFrame(rw)
		select {
		case <-more:
		case <-time.After(30 * time.Second):
			return
		}
		rw.WriteString("bcd")
		if rw.Flush() != nil {
			return
		}
		pong <- readClientFrame(rw)
		// A message the cut Read must not wait for (it returns it if it did).
		if writeFrame(rw, true, opText, []byte("late")) != nil {
			return
		}
		answerClose(rw)
	})
	conns := make(chan *deadlineSpy, 1)
	conn := dialServer(t, s.URL, func(o *Options) { o.HTTPClient = spiedClient(t, conns) })
	spy := <-conns
	ctx, cancel := context.WithCancel(context.Background())
	read := make(chan readResult, 1)
	go func() {
		b, err := conn.Read(ctx)
		read <- readResult{b, err}
	}()
	if got := <-pong; len(got) < 3 || string(got[1:]) != "p1" {
		t.Fatalf("the first ping's answer: %x", got)
	}
	cancel()
	<-spy.lifted // the interrupt was dealt with (the ping half read, or between frames)
	close(more)
	got := <-read
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Read cut short inside a ping: %q, %v; want context.Canceled", got.b, got.err)
	}
	if b, err := readCtx(t, conn); err != nil || string(b) != "late" {
		t.Errorf("after the cut: %q, %v", b, err)
	}
}

// answerClose reads the client's frames until its close frame, and answers it.
func answerClose(rw *bufio.ReadWriter) {
	for {
		f := readClientFrame(rw)
		if len(f) == 0 {
			return
		}
		if f[0]&0x0f == opClose {
			writeFrame(rw, true, opClose, f[1:])
			return
		}
	}
}
