package simulation

import (
	"context"
	"sync"
)

// InParallel calls do with 0, 1, ... n-1, on up to workers goroutines at once, and
// returns when every call has returned. Once ctx ends no further call starts; a
// call already started runs on.
func InParallel(ctx context.Context, n, workers int, do func(i int)) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(max(workers, 1), n) { // no workers would hang the sender below
		wg.Go(func() {
			for i := range jobs {
				// The sender's select may hand out one more i after ctx ends.
				if ctx.Err() == nil {
					do(i)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
}
