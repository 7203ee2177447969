package wsclient

import (
	"context"
	"fmt"
	"time"
)

// missedPongsToDrop is how many ping intervals in a row may pass without a pong.
const missedPongsToDrop = 2

// keepalive pings every interval. Each ping waits at most one interval for its pong;
// any pong received meanwhile (even a late one for an earlier ping) counts. After
// two intervals in a row without a pong the connection is dropped.
func (c *Conn) keepalive(interval time.Duration) {
	defer c.wg.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	missed := 0
	seen := c.pongs.Load()
	for {
		select {
		case <-c.stop:
			return
		case <-c.readerDone:
			return
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		err := c.ws.Ping(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if now := c.pongs.Load(); err == nil || now != seen {
			seen, missed = now, 0
			continue
		}
		if !timedOut {
			return // the connection is closing; the reader reports why
		}
		missed++
		if missed >= missedPongsToDrop {
			c.fail(fmt.Errorf("%w: %w (interval %v)", ErrDropped, ErrPongTimeout, interval))
			_ = c.ws.CloseNow()
			return
		}
	}
}
