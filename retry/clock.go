package retry

import "time"

// Clock tells the time. Tests inject a fixed or simulated clock.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }
