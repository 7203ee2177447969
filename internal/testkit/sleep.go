package testkit

import (
	"context"
	"sync"
	"time"
)

// SleepRecorder is an injected retry sleep that records each wait and returns at
// once (with the context's error), so that a test checks the waits between attempts
// without spending them. It is safe for concurrent use; its zero value is ready.
type SleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

// Sleep records d and returns ctx.Err().
func (s *SleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Delays returns a copy of the waits recorded so far, in order.
func (s *SleepRecorder) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}
