package simulation

import (
	"context"
	"sync/atomic"
	"testing"
)

// Once ctx ends no further call starts, though the sender may still hand out an
// index (its select picks at random between the send and the end): a call that
// ends ctx is the last, every time.
func TestInParallelStartsNothingAfterTheEnd(t *testing.T) {
	for round := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int32
		InParallel(ctx, 100, 1, func(int) {
			calls.Add(1)
			cancel()
		})
		cancel()
		if n := calls.Load(); n != 1 {
			t.Fatalf("round %d: %d calls after the first ended ctx, want 1", round, n)
		}
	}
}

// Every index is handed out once, on at most workers goroutines at once.
func TestInParallelRunsEachOnce(t *testing.T) {
	const n, workers = 200, 4
	var seen [n]atomic.Int32
	var running, most atomic.Int32
	InParallel(context.Background(), n, workers, func(i int) {
		now := running.Add(1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		seen[i].Add(1)
		running.Add(-1)
	})
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Errorf("index %d ran %d times, want 1", i, c)
		}
	}
	if m := most.Load(); m > workers {
		t.Errorf("%d calls at once, want at most %d", m, workers)
	}
}
