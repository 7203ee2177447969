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
//
// The completer also claims, in the transaction that records a batch, as many new
// deliveries as the pool then has room for: a slot freed by a finished attempt is
// refilled after one commit, not two, and the claim counts the leases the batch
// released. The claim loop claims when the completer is idle (new or due deliveries).
type dispatcher struct {
	o *Outbox
	// attemptCtx outlives the claim loop so that Close can let attempts finish; it
	// is canceled when Close gives up waiting.
	attemptCtx context.Context
	// inFlight counts reserved pool slots: attempts running or finished but not yet
	// recorded, and slots reserved for a claim under way.
	inFlight atomic.Int64
	results  chan outcome
	workers  sync.WaitGroup
	// stopping, under mu, ends claiming by the completer once run is shutting down,
	// so that no attempt starts after run waits for the workers.
	mu       sync.Mutex
	stopping bool
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
	go func() { defer close(completed); d.completeLoop(ctx) }()
	defer func() {
		d.mu.Lock()
		d.stopping = true
		d.mu.Unlock()
		d.workers.Wait()
		close(d.results)
		<-completed
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	minClaim := d.minClaim()
	for {
		full := false
		limit := d.reserve(func(busy int) int {
			if free := d.o.cfg.Workers - busy; free >= minClaim || busy == 0 && free > 0 {
				return min(free, d.o.cfg.BatchSize)
			}
			return 0
		})
		if limit > 0 {
			jobs, err := d.claim(ctx, limit)
			if err != nil && ctx.Err() == nil {
				d.o.log.Error().Err(err).Msg("outbox: claim failed")
			}
			d.inFlight.Add(int64(len(jobs) - limit))
			d.start(jobs)
			full = len(jobs) == limit
		}
		if full && int(d.inFlight.Load()) < d.o.cfg.Workers {
			continue // more may be due right now
		}
		wait := d.o.cfg.PollInterval
		if d.o.cfg.Workers-int(d.inFlight.Load()) >= minClaim {
			// With too little room to claim, the completer claims as slots free up
			// and nudges; the earliest due time matters only when this loop can act.
			wait = d.nextWait(ctx)
		}
		resetTimer(timer, wait)
		select {
		case <-ctx.Done():
			return
		case <-d.o.wake:
		case <-timer.C:
		}
	}
}

// minClaim is the smallest claim worth making while attempts are in flight: a
// quarter of the pool. Fewer, larger claims cost less than one per finished attempt.
func (d *dispatcher) minClaim() int { return max(1, min(d.o.cfg.BatchSize, d.o.cfg.Workers)/4) }

// reserve takes want(busy) pool slots at once (none when it is not positive) and
// returns how many it took: the claim loop and the completer both claim, and neither
// may overfill the pool.
func (d *dispatcher) reserve(want func(busy int) int) int {
	for {
		cur := d.inFlight.Load()
		n := want(int(cur))
		if n <= 0 {
			return 0
		}
		if d.inFlight.CompareAndSwap(cur, cur+int64(n)) {
			return n
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

// start runs one attempt for each job, in slots already reserved.
func (d *dispatcher) start(jobs []Job) {
	for _, job := range jobs {
		d.workers.Add(1)
		go func() {
			defer d.workers.Done()
			r := d.o.attempt(d.attemptCtx, job, d.o.policyOf(job.Endpoint))
			d.results <- outcome{job: job, r: r}
		}()
	}
}

func (d *dispatcher) claim(ctx context.Context, limit int) ([]Job, error) {
	return d.o.store.Claim(ctx, d.o.claimParams(limit))
}

func (o *Outbox) claimParams(limit int) ClaimParams {
	now := o.now()
	return ClaimParams{Now: now, LeaseUntil: now.Add(o.cfg.LeaseDuration), Limit: limit, Token: newID("lease")}
}

// completeLoop records outcomes in batches: it takes what has arrived, writes it in one
// transaction that also claims the room the batch frees, starts what it claimed, and
// nudges the claim loop (retries possibly due). Once ctx ends it only records.
func (d *dispatcher) completeLoop(ctx context.Context) {
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
		n := len(batch)
		// The guard keeps run from finishing its wait for the workers while this
		// batch may still start attempts.
		limit := 0
		d.mu.Lock()
		claiming := !d.stopping && ctx.Err() == nil
		if claiming {
			d.workers.Add(1)
		}
		d.mu.Unlock()
		if claiming {
			limit = d.reserve(func(busy int) int {
				// Like the claim loop, take a quarter of the pool or more at once while
				// other attempts run: a claim costs the single writer about as much
				// for one delivery as for several.
				if free := d.o.cfg.Workers - busy + n; free >= d.minClaim() || busy == n {
					return min(d.o.cfg.BatchSize, free)
				}
				return 0
			})
		}
		jobs := d.o.completeClaim(context.Background(), batch, limit)
		d.inFlight.Add(int64(len(jobs) - n - limit))
		d.start(jobs)
		if claiming {
			d.workers.Done()
		}
		d.o.nudge()
	}
}

// complete records a batch of outcomes. When the store fails, the batch is recorded
// again as faults on our side (rescheduled after FaultRetry, no attempt used); when
// that fails too, the leases expire and the reaper takes over.
func (o *Outbox) complete(ctx context.Context, batch []outcome) {
	o.completeClaim(ctx, batch, 0)
}

// completeClaim is complete, claiming up to limit deliveries in the same transaction
// when limit > 0; it returns the jobs claimed (none when recording failed).
func (o *Outbox) completeClaim(ctx context.Context, batch []outcome, limit int) []Job {
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
	var (
		applied []bool
		jobs    []Job
		err     error
	)
	if limit > 0 {
		applied, jobs, err = o.store.CompleteClaim(ctx, items, o.claimParams(limit))
	} else {
		applied, err = o.store.Complete(ctx, items)
	}
	if err != nil {
		o.log.Error().Err(err).Int("deliveries", len(batch)).Msg("outbox: recording attempts failed; rescheduling as internal faults")
		clear(notices)
		fault := errors.Join(errors.New("store error while recording the attempt"), err)
		for i, oc := range batch {
			items[i] = build(oc, result{fault: fault})
		}
		if _, err = o.store.Complete(ctx, items); err != nil {
			o.log.Error().Err(err).Msg("outbox: rescheduling failed; leases will expire")
		}
		return nil
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
	return jobs
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}
