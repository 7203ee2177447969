package wsclient

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestConnWithoutPingsHoldsNoGoroutine: without keepalive pings the connection is
// read on the caller's goroutine (inline.go): no goroutine of its own, a message
// read as it comes. Not parallel: no other test's connection runs meanwhile.
func TestConnWithoutPingsHoldsNoGoroutine(t *testing.T) {
	s := newWSServer(t, false, func(ctx context.Context, c *websocket.Conn) {
		for {
			typ, b, err := c.Read(ctx)
			if err != nil || c.Write(ctx, typ, b) != nil {
				return
			}
		}
	})
	conn := dialServer(t, s.URL, nil)
	if err := conn.Write(context.Background(), []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != "hi" {
		t.Fatalf("echo: %q, %v", got, err)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "wsclient.(*Conn).readLoop") {
		t.Errorf("a reader goroutine runs for a connection without pings")
	}
	if conn.fr == nil {
		t.Errorf("the connection is not read on the caller's goroutine")
	}
}

// TestConnReadCutShortAfterControlFrames: a ping that comes while Read waits is
// answered at once, and the wait can still be cut short after it, the connection
// whole.
func TestConnReadCutShortAfterControlFrames(t *testing.T) {
	t.Parallel()
	pong := make(chan []byte, 1)
	more := make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		if writeFrame(rw, true, opPing, []byte("p1")) != nil {
			return
		}
		pong <- readClientFrame(rw)
		select {
		case <-more:
		case <-time.After(30 * time.Second):
			return
		}
		writeFrame(rw, true, opText, []byte("after"))
		readClientFrame(rw) // the close frame, until the client goes
	})
	conn := dialServer(t, s.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(ctx)
		read <- err
	}()
	// The ping was answered by the waiting Read (a pong, opcode 0xA, payload p1).
	if got := <-pong; len(got) < 2 || got[0]&0x0f != 0xA || string(got[len(got)-2:]) != "p1" {
		t.Fatalf("the ping's answer: %x", got)
	}
	cancel()
	if err := <-read; !errors.Is(err, context.Canceled) {
		t.Fatalf("Read cut short: %v, want context.Canceled", err)
	}
	close(more)
	if got, err := readCtx(t, conn); err != nil || string(got) != "after" {
		t.Errorf("after the cut: %q, %v", got, err)
	}
}

// TestConnReadCutInsideMessage: a wait cut short while a message is half read (half
// a frame, or the first fragment of a message) never breaks the connection: the
// message comes whole and the next one after it.
func TestConnReadCutInsideMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		first, rest func(rw *bufio.ReadWriter) error
	}{
		{"half a frame", func(rw *bufio.ReadWriter) error {
			rw.Write([]byte{0x81, 10})
			rw.WriteString("hello")
			return rw.Flush()
		}, func(rw *bufio.ReadWriter) error {
			rw.WriteString("world")
			return rw.Flush()
		}},
		{"a fragment", func(rw *bufio.ReadWriter) error {
			return writeFrame(rw, false, opText, []byte("hello"))
		}, func(rw *bufio.ReadWriter) error {
			if err := writeFrame(rw, true, opPing, []byte("p")); err != nil {
				return err
			}
			return writeFrame(rw, true, opContinuation, []byte("world"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			more := make(chan struct{})
			s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
				if tc.first(rw) != nil {
					return
				}
				select {
				case <-more:
				case <-time.After(30 * time.Second):
					return
				}
				if tc.rest(rw) != nil || writeFrame(rw, true, opText, []byte("next")) != nil {
					return
				}
				for len(readClientFrame(rw)) > 0 { // pong, close: until the client goes
				}
			})
			conn := dialServer(t, s.URL, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			read := make(chan readResult, 1)
			go func() {
				b, err := conn.Read(ctx)
				read <- readResult{b, err}
			}()
			<-ctx.Done()
			close(more)
			got := <-read
			if errors.Is(got.err, context.DeadlineExceeded) {
				// Cut before the first bytes came: nothing was consumed.
				got.b, got.err = readCtx(t, conn)
			}
			if got.err != nil || string(got.b) != "helloworld" {
				t.Fatalf("the message: %q, %v", got.b, got.err)
			}
			if b, err := readCtx(t, conn); err != nil || string(b) != "next" {
				t.Errorf("the next message: %q, %v", b, err)
			}
		})
	}
}

type readResult struct {
	b   []byte
	err error
}

// readClientFrame reads one masked frame of the client and returns it unmasked (its
// header's first byte, then its payload); nil when the connection ends.
func readClientFrame(rw *bufio.ReadWriter) []byte {
	var h [2]byte
	if _, err := readFull(rw, h[:]); err != nil {
		return nil
	}
	n := int(h[1] & 0x7f) // control frames and the tests' messages are short
	var key [4]byte
	if _, err := readFull(rw, key[:]); err != nil {
		return nil
	}
	p := make([]byte, n)
	if _, err := readFull(rw, p); err != nil {
		return nil
	}
	for i := range p {
		p[i] ^= key[i%4]
	}
	return append([]byte{h[0]}, p...)
}

func readFull(rw *bufio.ReadWriter, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := rw.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestConnWriteAfterPeerClosed: the application closed with 1000 and went (its
// socket closed at once) while nothing read: a write that fails then reports the
// peer's close, as when a reader goroutine had read it, and the message sent before
// it is still read first.
func TestConnWriteAfterPeerClosed(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{})
	s := newRawServer(t, func(_ *http.Request, conn net.Conn, rw *bufio.ReadWriter) {
		defer close(gone)
		if writeFrame(rw, true, opText, []byte("bye")) != nil {
			return
		}
		writeFrame(rw, true, opClose, []byte{0x03, 0xe8})
	})
	conn := dialServer(t, s.URL, nil)
	<-gone
	var err error
	for range 100 { // the first writes may still reach the closed socket
		if err = conn.Write(context.Background(), []byte("x")); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrNormalClosure) {
		t.Fatalf("write after the peer's close: %v, want ErrNormalClosure", err)
	}
	if got, err := readCtx(t, conn); err != nil || string(got) != "bye" {
		t.Errorf("the message before the close: %q, %v", got, err)
	}
	if _, err := readCtx(t, conn); !errors.Is(err, ErrNormalClosure) {
		t.Errorf("then: %v, want ErrNormalClosure", err)
	}
}

// FuzzFrameTracking: however the frames come in pieces, frameReader knows where each
// ends and whether a fragmented message goes on, so that a frame of its own only
// ever goes in between two messages.
func FuzzFrameTracking(f *testing.F) {
	f.Add([]byte{1, 5, 0, 0x81, 200, 3, 0x09, 2, 1}, uint8(3))
	f.Add([]byte{0x01, 130, 1, 0x00, 20, 2, 0x80, 0, 5}, uint8(1))
	f.Fuzz(func(t *testing.T, spec []byte, chunk uint8) {
		// spec: triples (first header byte, payload length selector, unused).
		var stream []byte
		var ends []int     // offset of each frame's end
		var between []bool // whether the stream is between messages at that end
		fragmented := false
		for i := 0; i+2 < len(spec); i += 3 {
			b0 := spec[i] & 0x8f // FIN and opcode; no RSV bits
			op := b0 & 0x0f
			var n int
			switch sel := spec[i+1]; {
			case sel < 126:
				n = int(sel)
			case sel < 200:
				n = 126 + int(sel)*3 // a 16-bit length
			default:
				n = 70000 + int(sel) // a 64-bit length
			}
			stream = append(stream, b0)
			switch {
			case n < 126:
				stream = append(stream, byte(n))
			case n <= 0xffff:
				stream = append(stream, 126, byte(n>>8), byte(n))
			default:
				stream = append(stream, 127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
			}
			stream = append(stream, make([]byte, n)...)
			fin := b0&0x80 != 0
			switch {
			case op == 1 || op == 2:
				fragmented = !fin
			case op == 0 && fin:
				fragmented = false
			}
			ends = append(ends, len(stream))
			between = append(between, !fragmented)
		}
		fr := &frameReader{}
		size := int(chunk)%64 + 1
		next := 0
		for off := 0; off < len(stream); {
			k := min(size, len(stream)-off)
			// Never past a frame's end in one piece, so that each end is looked at.
			for next < len(ends) && ends[next] <= off {
				next++
			}
			if next < len(ends) && off+k > ends[next] {
				k = ends[next] - off
			}
			fr.track(stream[off : off+k])
			off += k
			atEnd := next < len(ends) && off == ends[next]
			atBoundary := fr.hn == 0 && fr.left == 0
			if atEnd != atBoundary {
				t.Fatalf("at %d: a frame ends %v, frameReader says %v", off, atEnd, atBoundary)
			}
			if atEnd && between[next] == fr.fragmented {
				t.Fatalf("at %d: between messages %v, frameReader says fragmented %v", off, between[next], fr.fragmented)
			}
		}
	})
}
