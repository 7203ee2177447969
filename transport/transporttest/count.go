package transporttest

import "sync"

// count counts events and lets a test wait for the n-th one without polling.
type count struct {
	mu      sync.Mutex
	n       int
	waiters map[int][]chan struct{}
}

// add records one event and releases those waiting for this many.
func (c *count) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	for _, ch := range c.waiters[c.n] {
		close(ch)
	}
	delete(c.waiters, c.n)
}

// reached returns a channel closed once n events have been recorded (at once when
// they already have).
func (c *count) reached(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if c.n >= n {
		close(ch)
		return ch
	}
	if c.waiters == nil {
		c.waiters = map[int][]chan struct{}{}
	}
	c.waiters[n] = append(c.waiters[n], ch)
	return ch
}
