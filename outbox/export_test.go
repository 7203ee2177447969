package outbox

import (
	"context"
	"sync"
)

// RunDue claims and attempts every delivery due at the configured clock's time, in
// batches, and records the outcomes, without starting any service: profile tests drive
// the engine step by step with an injected clock.
func (o *Outbox) RunDue(ctx context.Context) (int, error) {
	d := newDispatcher(o, ctx)
	total := 0
	for {
		jobs, err := d.claim(ctx, o.cfg.BatchSize)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		batch := make([]outcome, len(jobs))
		var wg sync.WaitGroup
		for i, job := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				batch[i] = outcome{job: job, r: o.attempt(ctx, job, o.policyOf(job.Endpoint))}
			}()
		}
		wg.Wait()
		o.complete(ctx, batch)
		total += len(jobs)
	}
}

// ClaimOnly leases due deliveries without attempting them, as a process that crashes
// right after claiming would.
func (o *Outbox) ClaimOnly(ctx context.Context) (int, error) {
	jobs, err := newDispatcher(o, ctx).claim(ctx, o.cfg.BatchSize)
	return len(jobs), err
}

// RunQueued claims due deliveries as the dispatcher does, calls queued (a test moves
// its clock there: the time the jobs waited in the queue for a worker), then runs and
// records them as the workers and the completer do.
func (o *Outbox) RunQueued(ctx context.Context, wait func()) (int, error) {
	d := newDispatcher(o, ctx)
	d.stop = ctx
	jobs, err := d.claim(ctx, o.cfg.BatchSize)
	if err != nil {
		return 0, err
	}
	wait()
	batch := make([]outcome, len(jobs))
	for i, job := range jobs {
		batch[i] = outcome{job: job, r: d.runJob(queued{job: job})}
	}
	o.complete(ctx, batch)
	return len(jobs), nil
}
