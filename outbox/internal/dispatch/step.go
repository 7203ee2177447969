package dispatch

import (
	"context"
	"sync"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
)

// The dispatcher one step at a time, with none of its goroutines: tests of the outbox
// drive the engine with an injected clock through these.

// RunDue claims and attempts every delivery due at the clock's time, in batches of
// BatchSize, and records the outcomes; it returns how many it attempted.
func (d *Dispatcher) RunDue(ctx context.Context) (int, error) {
	total := 0
	for {
		jobs, err := d.claim(ctx, d.cfg.BatchSize)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		batch := make([]outcome, len(jobs))
		var wg sync.WaitGroup
		for i, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				batch[i] = outcome{job: job, r: d.cfg.Attempt(ctx, job, policy.Of(job.Endpoint, d.cfg.Logger))}
			}()
		}
		wg.Wait()
		d.complete(ctx, batch)
		total += len(jobs)
	}
}

// ClaimOnly leases due deliveries without attempting them, as a process that crashes
// right after claiming would.
func (d *Dispatcher) ClaimOnly(ctx context.Context) (int, error) {
	jobs, err := d.claim(ctx, d.cfg.BatchSize)
	return len(jobs), err
}

// RunQueued claims due deliveries as Run does, calls wait (a test moves its clock
// there: the time the jobs waited in the queue for a worker), then runs and records
// them as the workers and the completer do.
func (d *Dispatcher) RunQueued(ctx context.Context, wait func()) (int, error) {
	d.stop = ctx
	jobs, err := d.claim(ctx, d.cfg.BatchSize)
	if err != nil {
		return 0, err
	}
	wait()
	batch := make([]outcome, len(jobs))
	for i, job := range jobs {
		batch[i] = outcome{job: job, r: d.runJob(queued{job: job})}
	}
	d.complete(ctx, batch)
	return len(jobs), nil
}
