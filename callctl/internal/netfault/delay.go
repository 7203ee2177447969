package netfault

import (
	"net"
	"os"
	"sync"
	"time"
)

// delayConn delays what goes through a connection: each write waits its delay before
// it is sent; what arrives is held until its delay after its arrival passed, in order.
// A reader goroutine (started at the first Read) takes the bytes off the socket as
// they arrive, so that each chunk's delay counts from its own arrival.
type delayConn struct {
	net.Conn
	out, in func() time.Duration

	wmu sync.Mutex // one write at a time, each after its own delay

	startPump sync.Once
	chunks    chan chunk // filled by pump, closed when it stops
	closed    chan struct{}
	closeOnce sync.Once

	rmu     sync.Mutex // one reader at a time
	pending []byte
	err     error // sticky: the socket's error, returned once the data before it is read

	dmu      sync.Mutex
	deadline time.Time     // the read deadline, enforced here (the socket has none)
	changed  chan struct{} // closed when deadline changes (made by a waiting Read)
}

type chunk struct {
	data []byte
	err  error
	due  time.Time
}

func newDelayConn(c net.Conn, out, in func() time.Duration) *delayConn {
	return &delayConn{Conn: c, out: out, in: in, chunks: make(chan chunk, 64), closed: make(chan struct{})}
}

// Write sends b once its delay passed.
func (c *delayConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.waitUntil(time.Now().Add(c.out()), false); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// pump reads the socket, stamping each chunk with the time it may be read.
func (c *delayConn) pump() {
	defer close(c.chunks)
	var last time.Time
	for {
		buf := make([]byte, 32<<10)
		n, err := c.Conn.Read(buf)
		due := time.Now().Add(c.in())
		if due.Before(last) {
			due = last // bytes keep their order, whatever each one's jitter
		}
		last = due
		select {
		case c.chunks <- chunk{data: buf[:n], err: err, due: due}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns bytes once they are due. A read deadline set while it waits counts at
// once, as a socket's does: wsclient cuts a wait short with a deadline in the past.
func (c *delayConn) Read(b []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.startPump.Do(func() { go c.pump() })
	for len(c.pending) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		deadline, changed := c.readDeadline()
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return 0, os.ErrDeadlineExceeded
		}
		var timeout <-chan time.Time
		var t *time.Timer
		if !deadline.IsZero() {
			t = time.NewTimer(time.Until(deadline))
			timeout = t.C
		}
		var err error
		select {
		case ch, ok := <-c.chunks:
			if !ok {
				err = net.ErrClosed
				break
			}
			// Kept whatever the wait's outcome: a deadline must not lose bytes.
			c.pending, c.err = ch.data, ch.err
			err = c.waitUntil(ch.due, true)
		case <-timeout:
			err = os.ErrDeadlineExceeded
		case <-changed:
		case <-c.closed:
			err = net.ErrClosed
		}
		if t != nil {
			t.Stop()
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// waitUntil waits until t, or fails when the connection is closed or, with
// deadline, when the read deadline passes (set before or during the wait).
func (c *delayConn) waitUntil(t time.Time, deadline bool) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		var changed <-chan struct{}
		if deadline {
			var dl time.Time
			dl, changed = c.readDeadline()
			if !dl.IsZero() && dl.Before(t) {
				if d = time.Until(dl); d <= 0 {
					return os.ErrDeadlineExceeded
				}
			}
		}
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
			if !time.Now().Before(t) {
				return nil
			}
			// The deadline came first: the loop returns it.
		case <-changed:
			timer.Stop()
		case <-c.closed:
			timer.Stop()
			return net.ErrClosed
		}
	}
}

// readDeadline returns the read deadline and a channel closed when it changes.
func (c *delayConn) readDeadline() (time.Time, <-chan struct{}) {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.deadline, c.changed
}

// SetReadDeadline bounds Read here: the socket itself never has a read deadline, so
// that the reader goroutine keeps taking bytes off it.
func (c *delayConn) SetReadDeadline(t time.Time) error {
	c.dmu.Lock()
	c.deadline = t
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	c.dmu.Unlock()
	return nil
}

func (c *delayConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

// Close closes the socket and ends every wait.
func (c *delayConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.Conn.Close()
	})
	return err
}
