package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// inboxSize is how many read messages may wait for Read. The reader goroutine stops
// reading (and so stops seeing pongs) when it is full: callers must keep reading.
const inboxSize = 16

// Conn is an open WebSocket to an application. Without keepalive pings it is read on
// the goroutine that calls Read (inline.go): control frames (pings, the peer's close)
// are handled when Read is called, and a Read whose context ends leaves the
// connection open. With keepalive pings a goroutine reads it continuously, so pongs
// and close frames are handled whether or not Read is waiting. Write and Close are
// safe for concurrent use; Read must be called from one goroutine at a time. Keep
// reading (the reader goroutine holds at most 16 messages, then stops, pongs
// included) and always Close the Conn, even after a drop, to release it.
type Conn struct {
	ws         *websocket.Conn
	logger     zerolog.Logger
	pongs      *atomic.Int64
	maxPayload int

	// fr is set when Read reads on the caller's goroutine (no reader goroutine, no
	// inbox); over is set once the connection ended there.
	fr     *frameReader
	over   atomic.Bool
	readMu sync.Mutex // one Read, or settle, at a time
	held   []inbound  // read by settle, for the next Reads

	inbox      chan inbound  // closed by the reader goroutine when it exits
	stop       chan struct{} // closed by Close
	readerDone chan struct{}
	wg         sync.WaitGroup

	causeMu   sync.Mutex
	cause     error // why the connection ended; the first reason wins...
	causeWeak bool  // ...unless it only says "closed by someone else"

	closeOnce sync.Once
}

type inbound struct {
	data []byte
	err  error
}

func newConn(ws *websocket.Conn, o Options, pongs *atomic.Int64, fr *frameReader) *Conn {
	c := &Conn{
		ws:         ws,
		logger:     o.Logger,
		pongs:      pongs,
		maxPayload: o.MaxPayload,
		stop:       make(chan struct{}),
	}
	// coder/websocket's own limit closes the socket; it is only the hard cap here.
	ws.SetReadLimit(int64(o.MaxPayload) * HardCapFactor)
	if fr != nil && o.PingInterval == 0 {
		c.fr = fr
		return c
	}
	c.inbox = make(chan inbound, inboxSize)
	c.readerDone = make(chan struct{})
	c.wg.Add(1)
	go c.readLoop(o.MaxPayload)
	if o.PingInterval > 0 {
		c.wg.Add(1)
		go c.keepalive(o.PingInterval)
	}
	return c
}

// Subprotocol returns the negotiated subprotocol (always ws.jambonz.org).
func (c *Conn) Subprotocol() string { return c.ws.Subprotocol() }

// Read returns the next text message. A binary message gives ErrBinaryFrame and a
// message over MaxPayload ErrMessageTooLarge: the message is discarded and the
// connection stays open, so call Read again. Once the connection is over, Read
// returns an error wrapping ErrNormalClosure (the peer closed with 1000),
// ErrDropped (reconnect; CloseStatus gives the peer's close status, if any) or
// ErrClosed (Close was called). When ctx ends first, Read returns ctx.Err() and the
// connection stays open. A Read whose ctx has ended already still returns a message
// that has come, as a poll: queued by the reader goroutine (with pings), or read
// ahead, or over ws:// waiting in the socket (without).
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	if c.fr != nil {
		return c.readInline(ctx)
	}
	return c.readQueued(ctx)
}

// readQueued is Read from the reader goroutine's inbox. A message queued already is
// returned even if ctx has ended (wssession's Poll reads with an ended context).
func (c *Conn) readQueued(ctx context.Context) ([]byte, error) {
	select {
	case m, ok := <-c.inbox:
		return c.queued(m, ok)
	default:
	}
	select {
	case m, ok := <-c.inbox:
		return c.queued(m, ok)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Conn) queued(m inbound, ok bool) ([]byte, error) {
	if !ok {
		return nil, c.endCause()
	}
	return m.data, m.err
}

// Write sends one text message. If ctx ends before the message is written the
// connection is closed (coder/websocket cannot abandon half a frame) and later Reads
// report a drop. After the connection is over Write returns its end cause.
func (c *Conn) Write(ctx context.Context, msg []byte) error {
	err := c.ws.Write(ctx, websocket.MessageText, msg)
	if err == nil {
		return nil
	}
	if cause := c.strongCause(); cause != nil {
		return fmt.Errorf("wsclient: write: %w", cause)
	}
	if errors.Is(err, net.ErrClosed) {
		// Closed by the reader or keepalive, which record the real cause for Read.
		return fmt.Errorf("wsclient: write: %w: %w", ErrDropped, err)
	}
	if c.fr != nil && ctx.Err() == nil && c.settle() {
		// The peer had closed (its close frame was waiting to be read).
		if cause := c.strongCause(); cause != nil {
			return fmt.Errorf("wsclient: write: %w", cause)
		}
	}
	err = fmt.Errorf("%w: write: %w", ErrDropped, err)
	c.fail(err)
	return fmt.Errorf("wsclient: %w", err)
}

// Close sends a close frame with code and reason, waits (at most about 10 s, as
// coder/websocket does) for the peer's, and stops every goroutine of the
// connection. The node closes with 1000 when the call ends and 1001 when the
// initial session:new fails. Close is idempotent and also releases a connection
// that already dropped; later calls return nil. It returns an error only when the
// close handshake failed for another reason than the peer closing too.
func (c *Conn) Close(code int, reason string) error {
	var err error
	c.closeOnce.Do(func() {
		c.fail(ErrClosed)
		if c.fr != nil {
			// A Read from now on returns ErrClosed, and one cut short meanwhile does
			// not cut coder/websocket's wait for the peer's close frame (inline.go).
			c.fr.beginClose()
		}
		close(c.stop)
		werr := c.ws.Close(websocket.StatusCode(code), reason)
		c.wg.Wait()
		// A close frame from the peer crossing ours ends the connection just as well.
		if werr != nil && !errors.Is(werr, net.ErrClosed) && websocket.CloseStatus(werr) == -1 {
			err = fmt.Errorf("wsclient: close: %w", werr)
		}
	})
	return err
}

// readLoop reads messages into the inbox until the connection ends.
func (c *Conn) readLoop(maxPayload int) {
	defer c.wg.Done()
	defer close(c.readerDone)
	defer close(c.inbox)
	for {
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.end(err)
			return
		}
		data, fatal, err := readLimited(typ, r, maxPayload)
		if fatal {
			c.end(err)
			return
		}
		if err != nil {
			c.logger.Debug().Err(err).Msg("websocket message discarded")
		}
		select {
		case c.inbox <- inbound{data: data, err: err}:
		case <-c.stop:
			return
		}
	}
}

// end records why the connection ended, from the reader's final error, and releases
// the socket.
func (c *Conn) end(err error) {
	switch code := websocket.CloseStatus(err); {
	case code == websocket.StatusNormalClosure:
		c.fail(fmt.Errorf("%w: %w", ErrNormalClosure, err))
	case code != -1:
		c.fail(fmt.Errorf("%w: peer closed with status %d: %w", ErrDropped, code, err))
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.fail(fmt.Errorf("%w: %w: %w", ErrDropped, ErrMessageTooLarge, err))
	case errors.Is(err, net.ErrClosed):
		// Closed under the reader by a failed write, the keepalive or Close, which
		// record the real cause (possibly just after this).
		c.record(fmt.Errorf("%w: %w", ErrDropped, err), true)
	default:
		c.fail(fmt.Errorf("%w: %w", ErrDropped, err))
	}
	c.over.Store(true)
	_ = c.ws.CloseNow()
	c.logger.Debug().Err(c.currentCause()).Msg("websocket connection ended")
}

// fail records err as the end cause unless one is already known.
func (c *Conn) fail(err error) { c.record(err, false) }

// record sets the end cause if none is known or the known one is weak.
func (c *Conn) record(err error, weak bool) {
	c.causeMu.Lock()
	defer c.causeMu.Unlock()
	if c.cause == nil || c.causeWeak && !weak {
		c.cause, c.causeWeak = err, weak
	}
}

func (c *Conn) currentCause() error {
	c.causeMu.Lock()
	defer c.causeMu.Unlock()
	return c.cause
}

// strongCause is the end cause unless it is a weak one (or none is known).
func (c *Conn) strongCause() error {
	c.causeMu.Lock()
	defer c.causeMu.Unlock()
	if c.causeWeak {
		return nil
	}
	return c.cause
}

func (c *Conn) endCause() error {
	if err := c.currentCause(); err != nil {
		return err
	}
	return ErrDropped
}
