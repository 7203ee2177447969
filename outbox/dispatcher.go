package outbox

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// dispatcher claims due deliveries in batches, runs one attempt per claim on a bounded
// pool of goroutines, and hands outcomes to a single completer that records them in
// batched transactions. Waiting deliveries cost nothing here: they are rows until due.
type dispatcher struct {
	o *Outbox
	// attemptCtx outlives the claim loop so that Close can let attempts finish; it
	// is canceled when Close gives up waiting.
	attemptCtx context.Context
	inFlight   atomic.Int64
	results    chan outcome
	workers    sync.WaitGroup
}

// outcome pairs a claimed job with what its attempt produced.
type outcome struct {
	job Job
	r   result
}

func newDispatcher(o *Outbox, attemptCtx context.Context) *dispatcher {
	return &dispatcher{o: o, attemptCtx: attemptCtx, results: make(chan outcome, o.cfg.Workers)}
}

// run claims until ctx ends, then waits for the attempts in flight and their records.
func (d *dispatcher) run(ctx context.Context) {
	completed := make(chan struct{})
	go func() { defer close(completed); d.completeLoop() }()
	defer func() {
		d.workers.Wait()
		close(d.results)
		<-completed
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	// While attempts are in flight, claim only once a quarter of the pool is free:
	// fewer, larger claims cost less than one claim per finished attempt.
	minClaim := max(1, min(d.o.cfg.BatchSize, d.o.cfg.Workers)/4)
	for {
		full := false
		busy := int(d.inFlight.Load())
		if free := d.o.cfg.Workers - busy; free >= minClaim || busy == 0 && free > 0 {
			limit := min(free, d.o.cfg.BatchSize)
			n, err := d.claimAndStart(ctx, limit)
			if err != nil && ctx.Err() == nil {
				d.o.log.Error().Err(err).Msg("outbox: claim failed")
			}
			full = n == limit
		}
		if full && int(d.inFlight.Load()) < d.o.cfg.Workers {
			continue // more may be due right now
		}
		resetTimer(timer, d.nextWait(ctx))
		select {
		case <-ctx.Done():
			return
		case <-d.o.wake:
		case <-timer.C:
		}
	}
}

// nextWait is how long the loop may sleep: until the earliest due delivery, at most
// PollInterval. A due time already past (held or capped endpoints) waits for a nudge
// or the poll rather than spinning.
func (d *dispatcher) nextWait(ctx context.Context) time.Duration {
	wait := d.o.cfg.PollInterval
	due, ok, err := d.o.store.NextDue(ctx)
	if err != nil || !ok {
		return wait
	}
	if until := due.Sub(d.o.cfg.Clock.Now()); until > 0 && until < wait {
		return until
	}
	return wait
}

// claimAndStart claims up to limit deliveries and starts one attempt for each.
func (d *dispatcher) claimAndStart(ctx context.Context, limit int) (int, error) {
	jobs, err := d.claim(ctx, limit)
	for _, job := range jobs {
		d.inFlight.Add(1)
		d.workers.Add(1)
		go func() {
			defer d.workers.Done()
			r := d.o.attempt(d.attemptCtx, job, d.o.policyOf(job.Endpoint))
			d.results <- outcome{job: job, r: r}
		}()
	}
	return len(jobs), err
}

func (d *dispatcher) claim(ctx context.Context, limit int) ([]Job, error) {
	now := d.o.now()
	return d.o.store.Claim(ctx, ClaimParams{
		Now: now, LeaseUntil: now.Add(d.o.cfg.LeaseDuration), Limit: limit, Token: newID("lease"),
	})
}

// completeLoop records outcomes in batches: it takes what has arrived, writes it in one
// transaction, and nudges the claim loop (slots freed, retries possibly due).
func (d *dispatcher) completeLoop() {
	const maxBatch = 256
	batch := make([]outcome, 0, maxBatch)
	for first := range d.results {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < maxBatch {
			select {
			case oc, ok := <-d.results:
				if !ok {
					break drain
				}
				batch = append(batch, oc)
			default:
				break drain
			}
		}
		d.o.complete(context.Background(), batch)
		d.inFlight.Add(-int64(len(batch)))
		d.o.nudge()
	}
}

// complete records a batch of outcomes. When the store fails, the batch is recorded
// again as faults on our side (rescheduled after FaultRetry, no attempt used); when
// that fails too, the leases expire and the reaper takes over.
func (o *Outbox) complete(ctx context.Context, batch []outcome) {
	now := o.now()
	notices := make(map[string][]Notice, len(batch))
	var lock sync.Mutex
	build := func(oc outcome, r result) Completion {
		id := oc.job.Delivery.ID
		return Completion{DeliveryID: id, Token: oc.job.Token, Decide: func(cur Delivery, ep Endpoint) (Change, error) {
			dec := decide(o.policyOf(ep), cur, ep, r, now, o.cfg.Rand)
			lock.Lock()
			notices[id] = dec.notices
			lock.Unlock()
			return dec.change, nil
		}}
	}
	items := make([]Completion, len(batch))
	for i, oc := range batch {
		items[i] = build(oc, oc.r)
	}
	applied, err := o.store.Complete(ctx, items)
	if err != nil {
		o.log.Error().Err(err).Int("deliveries", len(batch)).Msg("outbox: recording attempts failed; rescheduling as internal faults")
		clear(notices)
		fault := errors.Join(errors.New("store error while recording the attempt"), err)
		for i, oc := range batch {
			items[i] = build(oc, result{fault: fault})
		}
		if applied, err = o.store.Complete(ctx, items); err != nil {
			o.log.Error().Err(err).Msg("outbox: rescheduling failed; leases will expire")
			return
		}
		return
	}
	for i, oc := range batch {
		if !applied[i] {
			o.log.Warn().Str("delivery", oc.job.Delivery.ID).Msg("outbox: lease lost before the attempt was recorded")
			continue
		}
		for _, n := range notices[oc.job.Delivery.ID] {
			o.cfg.Notify(n)
		}
		if oc.r.fault == nil && !oc.r.released && o.cfg.Observe != nil {
			o.cfg.Observe(oc.job.Delivery, oc.r.attempt)
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}
