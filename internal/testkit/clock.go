package testkit

import (
	"sync"
	"time"
)

// Epoch is the time a new Clock starts at: fixed, so that failures are reproducible.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a manual clock (it implements retry.Clock): it moves only when told, or by
// Step on every reading when Step is set. It is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

// NewClock returns a clock standing at Epoch.
func NewClock() *Clock { return &Clock{now: Epoch} }

// NewClockAt returns a clock standing at t.
func NewClockAt(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time, then moves it by the step set with SetStep (none by
// default): a stepping clock gives every reading its own instant.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// SetStep makes every later reading move the clock by d after it is read.
func (c *Clock) SetStep(d time.Duration) {
	c.mu.Lock()
	c.step = d
	c.mu.Unlock()
}
