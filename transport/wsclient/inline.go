package wsclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// A connection without keepalive pings is read on the caller's goroutine (issue 28,
// docs/BENCHMARKS.md §3 "WebSocket calls"): Read itself reads the socket, so a
// message reaches the call with no hand-off between goroutines and a live call holds
// no goroutine of its connection. coder/websocket closes the connection when the
// context of a read ends, so Read gives it none; a Read whose context ends is cut
// short one layer below, where coder/websocket reads the upgraded connection:
// frameReader sets a read deadline in the past on the socket and, if coder/websocket
// was waiting for the first byte of a frame between two messages, hands it an empty
// binary frame of its own (two bytes no peer sent) instead of an error, so that
// coder/websocket returns a message and its state stays whole; Read recognises the
// frame and returns ctx's error. A frame cut in the middle is read to its end first
// (the peer has sent its header; what is left of it is read, for cutFrameGrace): a
// connection is never left with half a frame consumed. If no message ends there (the
// frame was a ping, or a fragment), the cut counts at the next boundary between two
// messages; a peer that does not end the frame within cutFrameGrace has stalled, and
// the connection ends as a drop.
//
// With keepalive pings a goroutine still reads continuously (readLoop): a pong must
// be seen while the caller does something else than Read.

// frameReader is the upgraded connection as coder/websocket reads it. It follows the
// frames going through it, so it knows when the next byte starts a frame outside a
// fragmented message: the only place a frame of its own can go in.
type frameReader struct {
	rwc io.ReadWriteCloser // the HTTP client's upgraded body
	nc  net.Conn           // its connection, for deadlines

	mu          sync.Mutex
	gen         uint64 // counts Reads, so that a late interrupt cannot cut the next one
	armed       bool
	interrupted bool
	// deferred: an interrupt came in the middle of a frame (or of a fragmented
	// message); the deadline is put off (by cutFrameGrace) until the next frame
	// boundary between two messages, where it counts again.
	deferred bool
	// look: the Read's context had ended before it began (a poll): before handing
	// coder/websocket a frame of ours, look once whether the socket holds bytes.
	look bool
	// closing: Close waits for the peer's close frame, reading through here: no
	// interrupt may cut that short (it would meet frames of ours over and over).
	closing bool

	// Read's goroutine only (coder/websocket reads under its own lock).
	injected   bool // the last frame handed up was ours
	hdr        [14]byte
	hn         int   // header bytes of the current frame seen
	left       int64 // payload bytes of the current frame still to go through
	fragmented bool  // a data message without FIN goes on
}

// emptyBinaryFrame is the frame frameReader hands coder/websocket to end a wait:
// FIN, opcode binary, no mask, no payload.
var emptyBinaryFrame = [2]byte{0x82, 0x00}

// cutFrameGrace bounds how long a Read whose context ended waits for the end of the
// frame (or fragmented message) it was cut in the middle of: a peer that stalls
// there would otherwise hold the caller past its context for good. Tests shorten it.
var cutFrameGrace = 10 * time.Second

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

func (f *frameReader) Read(p []byte) (int, error) {
	for {
		n, err := f.rwc.Read(p)
		if n > 0 {
			f.track(p[:n])
			f.mu.Lock()
			if f.deferred && f.interrupted && f.between() {
				// The frame cut in the middle has ended: the cut counts from here (a
				// control frame or a fragment returns no message, so coder/websocket
				// reads on and meets the deadline where a frame of ours can go in).
				f.deferred = false
				_ = f.nc.SetReadDeadline(aLongTimeAgo)
			}
			f.mu.Unlock()
			if isTimeout(err) {
				err = nil // the next Read meets the deadline again
			}
			return n, err
		}
		if !isTimeout(err) {
			return n, err
		}
		f.mu.Lock()
		if !f.interrupted {
			closing := f.closing
			f.mu.Unlock()
			if closing {
				continue // ours, lifted as Close began: read on for the peer's close
			}
			return n, err // not a deadline of ours
		}
		if f.between() && f.look {
			f.look = false
			if waiting(f.nc) {
				// A poll takes what has come: read it, and cut at the boundary after.
				f.deferred = true
				_ = f.nc.SetReadDeadline(time.Now().Add(cutFrameGrace))
				f.mu.Unlock()
				continue
			}
		}
		if f.between() && len(p) >= len(emptyBinaryFrame) {
			f.mu.Unlock()
			f.injected = true
			return copy(p, emptyBinaryFrame[:]), nil
		}
		if f.deferred {
			// The frame did not end within cutFrameGrace: the peer stalls in the
			// middle of it. coder/websocket fails and the connection ends (a drop).
			f.mu.Unlock()
			return n, err
		}
		// In the middle of a frame: its end is read (and a fragmented message's),
		// for cutFrameGrace at most. If a message ends there it is returned; if not
		// (a control frame), the cut counts at the next boundary.
		f.deferred = true
		_ = f.nc.SetReadDeadline(time.Now().Add(cutFrameGrace))
		f.mu.Unlock()
	}
}

func (f *frameReader) Write(p []byte) (int, error) { return f.rwc.Write(p) }
func (f *frameReader) Close() error                { return f.rwc.Close() }

// between reports whether the next byte starts a frame outside a fragmented message.
func (f *frameReader) between() bool { return f.hn == 0 && f.left == 0 && !f.fragmented }

// track follows the frames in b, the next bytes handed to coder/websocket
// (RFC 6455 §5.2).
func (f *frameReader) track(b []byte) {
	for len(b) > 0 {
		if f.left > 0 {
			k := int64(len(b))
			if k > f.left {
				k = f.left
			}
			f.left -= k
			b = b[k:]
			continue
		}
		f.hdr[f.hn] = b[0]
		f.hn++
		b = b[1:]
		if f.hn < 2 {
			continue
		}
		need := 2
		switch f.hdr[1] & 0x7f {
		case 126:
			need += 2
		case 127:
			need += 8
		}
		if f.hdr[1]&0x80 != 0 {
			need += 4 // masked (a server never masks; followed anyway)
		}
		if f.hn < need {
			continue
		}
		var length int64
		switch l := f.hdr[1] & 0x7f; l {
		case 126:
			length = int64(f.hdr[2])<<8 | int64(f.hdr[3])
		case 127:
			for _, c := range f.hdr[2:10] {
				length = length<<8 | int64(c)
			}
		default:
			length = int64(l)
		}
		fin := f.hdr[0]&0x80 != 0
		switch op := f.hdr[0] & 0x0f; {
		case op == 1 || op == 2: // a message starts
			f.fragmented = !fin
		case op == 0 && fin: // its last continuation
			f.fragmented = false
		}
		f.hn, f.left = 0, max(length, 0)
	}
}

// arm makes the next waits interruptible and returns their generation.
func (f *frameReader) arm() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.armed, f.interrupted, f.deferred, f.look = true, false, false, false
	return f.gen
}

// poll cuts short the wait of generation gen before it begins: what was read ahead,
// or waits in the socket, is still read.
func (f *frameReader) poll(gen uint64) {
	f.interrupt(gen)
	f.mu.Lock()
	f.look = true
	f.mu.Unlock()
}

// interrupt cuts short the wait of generation gen, if it still goes on.
func (f *frameReader) interrupt(gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed && f.gen == gen && !f.closing {
		f.interrupted = true
		_ = f.nc.SetReadDeadline(aLongTimeAgo)
	}
}

// beginClose makes interrupts of no effect from now on (Close reads the peer's
// close frame) and lifts a deadline one has set.
func (f *frameReader) beginClose() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.interrupted {
		_ = f.nc.SetReadDeadline(time.Time{})
	}
	f.closing, f.interrupted = true, false
}

func (f *frameReader) isClosing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// disarm ends the Read of generation gen: the socket has no deadline again.
func (f *frameReader) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.interrupted {
		_ = f.nc.SetReadDeadline(time.Time{})
	}
	f.armed, f.interrupted, f.deferred, f.look = false, false, false, false
}

// takeInjected reports whether the message coder/websocket just returned is the
// frame of an interrupt.
func (f *frameReader) takeInjected() bool {
	in := f.injected
	f.injected = false
	return in
}

func isTimeout(err error) bool {
	return err != nil && errors.Is(err, os.ErrDeadlineExceeded)
}

// upgradeHook is the RoundTripper of one dial: it puts a frameReader between
// coder/websocket and the upgraded connection.
type upgradeHook struct {
	base http.RoundTripper
	fr   *frameReader
}

func (h *upgradeHook) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		if rwc, ok := resp.Body.(io.ReadWriteCloser); ok {
			h.fr = &frameReader{rwc: rwc}
			resp.Body = h.fr
		}
	}
	return resp, err
}

// settleTime bounds settle: what it looks for is in the socket already.
const settleTime = 50 * time.Millisecond

// readInline is Read on the caller's goroutine.
func (c *Conn) readInline(ctx context.Context) ([]byte, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if len(c.held) > 0 {
		m := c.held[0]
		c.held = c.held[1:]
		if len(c.held) == 0 {
			c.held = nil
		}
		return m.data, m.err
	}
	return c.readOne(ctx)
}

// settle reads, after a write failed, what the peer sent before it went: a reader
// goroutine would have read its close frame already, and the write's error is then
// the peer's close (1000 ends the session; docs/call-control.md §4), not a drop.
// Messages read meanwhile are held for Read (at most as many as a reader goroutine
// holds). It reports whether it read anything; it does nothing while a Read waits
// (which sees the close itself).
func (c *Conn) settle() bool {
	if !c.readMu.TryLock() {
		return false
	}
	defer c.readMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), settleTime)
	defer cancel()
	read := false
	for len(c.held) < inboxSize {
		data, err := c.readOne(ctx)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return read
		}
		read = true
		if c.over.Load() || c.fr.isClosing() {
			return read // the end, or Close (its ErrClosed is the write's error)
		}
		c.held = append(c.held, inbound{data: data, err: err})
	}
	return read
}

// readOne reads the next message, or the end of the connection.
func (c *Conn) readOne(ctx context.Context) ([]byte, error) {
	for {
		if c.over.Load() || c.fr.isClosing() {
			return nil, c.endCause()
		}
		gen := c.fr.arm()
		var stop func() bool
		if ctx.Err() != nil {
			// Ended already (wssession's Poll): what has come is still returned, as a
			// reader goroutine would have queued it.
			c.fr.poll(gen)
		} else if ctx.Done() != nil {
			stop = context.AfterFunc(ctx, func() { c.fr.interrupt(gen) })
		}
		data, injected, fatal, err := c.readMessage()
		if stop != nil {
			stop()
		}
		c.fr.disarm()
		switch {
		case fatal:
			c.end(err)
			return nil, c.endCause()
		case injected:
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue // an interrupt of no consequence: wait on
		case err != nil:
			c.logger.Debug().Err(err).Msg("websocket message discarded")
		}
		return data, err
	}
}

// readMessage reads one message with coder/websocket (which handles the control
// frames before it): never with a context that can end, which would close the
// connection.
func (c *Conn) readMessage() (data []byte, injected, fatal bool, err error) {
	typ, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return nil, false, true, err
	}
	if c.fr.takeInjected() {
		// Its empty payload is read, so the message is complete.
		_, _ = io.Copy(io.Discard, r)
		return nil, true, false, nil
	}
	data, fatal, err = readLimited(typ, r, c.maxPayload)
	return data, false, fatal, err
}
