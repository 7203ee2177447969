package outbox

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// dispatcher claims due deliveries in batches, runs their attempts on a pool of
// Config.Workers goroutines, and hands outcomes to a single completer that records
// them in batched transactions. Waiting deliveries cost nothing here: they are rows
// until due.
//
// The node holds more leases than it has workers (maxHeld): claimed deliveries wait in
// a queue for a worker, and finished attempts wait for the completer, so a worker does
// not idle while the single writer commits and one transaction records and claims
// many deliveries. The completer claims, in the transaction that records a batch, the
// room that batch frees; the claim loop claims when the completer is idle (new or due
// deliveries).
type dispatcher struct {
	o *Outbox
	// attemptCtx outlives the claim loop so that Close can let attempts finish; it
	// is canceled when Close gives up waiting.
	attemptCtx context.Context
	// stop is the claim loop's context: once it ends, queued jobs are released
	// without an attempt.
	stop context.Context
	// held counts the deliveries this node holds leased and has not recorded: queued,
	// in an attempt, or awaiting the completer, plus room reserved for a claim under
	// way. Claims keep it within maxHeld; hand-offs may take Workers more (a claim
	// under way reserves its whole batch, and a publish to idle workers must not wait
	// for it). maxHeld+Workers bounds memory and the channels below.
	held    atomic.Int64
	maxHeld int
	// busy counts jobs queued or in an attempt: fewer than Workers means a worker is
	// idle (handoff).
	busy    atomic.Int64
	queue   chan queued
	results chan outcome
	workers sync.WaitGroup
	// claiming, under mu, counts completer claims under way; stopping ends them once
	// run shuts down, so that nothing is queued after the queue closes.
	mu       sync.Mutex
	stopping bool
	claiming sync.WaitGroup
	// halted records, per endpoint, when this node last learned that the endpoint
	// takes no deliveries for now: held (429, or 503 with Retry-After, where the
	// profile holds the endpoint), paused, disabled or removed. A job claimed before
	// that moment was claimed by someone who did not know, and is released unsent:
	// OUTBOX.md §3, a 429 "holds every delivery to the endpoint" and "uses one attempt
	// of that delivery only". Jobs claimed later saw the endpoint as the store has it.
	haltMu sync.Mutex
	halted map[string]time.Time
}

// queued is a claimed job waiting for a worker. claimedAt is when the dispatcher
// asked the store for it (its monotonic clock): a job claimed before the node learned
// that its endpoint stopped taking deliveries is released unsent (haltedSince).
type queued struct {
	job       outboxdriver.Job
	claimedAt time.Time
}

// outcome pairs a claimed job with what its attempt produced.
type outcome struct {
	job outboxdriver.Job
	r   result
}

func newDispatcher(o *Outbox, attemptCtx context.Context) *dispatcher {
	maxHeld := o.cfg.Workers + o.cfg.BatchSize
	bound := maxHeld + o.cfg.Workers // see held
	return &dispatcher{o: o, attemptCtx: attemptCtx, maxHeld: maxHeld,
		queue: make(chan queued, bound), results: make(chan outcome, bound), halted: map[string]time.Time{}}
}

// halt records that endpoint takes no deliveries from now on, until the store says
// otherwise (a later claim). Entries older than a lease are dropped: no job waits
// that long.
func (d *dispatcher) halt(endpoint string) {
	now := time.Now()
	d.haltMu.Lock()
	defer d.haltMu.Unlock()
	for id, at := range d.halted {
		if now.Sub(at) > d.o.cfg.LeaseDuration {
			delete(d.halted, id)
		}
	}
	d.halted[endpoint] = now
}

// haltedSince reports whether q's endpoint was halted after q was claimed.
func (d *dispatcher) haltedSince(q queued) bool {
	d.haltMu.Lock()
	defer d.haltMu.Unlock()
	at, ok := d.halted[q.job.Endpoint.ID]
	return ok && q.claimedAt.Before(at)
}

// run claims until ctx ends, then releases what is queued, waits for the attempts
// in flight, and for their records.
func (d *dispatcher) run(ctx context.Context) {
	d.stop = ctx
	for range d.o.cfg.Workers {
		d.workers.Add(1)
		go func() { defer d.workers.Done(); d.work() }()
	}
	completed := make(chan struct{})
	go func() { defer close(completed); d.completeLoop(ctx) }()
	defer func() {
		d.mu.Lock()
		d.stopping = true
		d.mu.Unlock()
		d.claiming.Wait()
		close(d.queue)
		d.workers.Wait()
		close(d.results)
		<-completed
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	minClaim := d.minClaim()
	for {
		full := false
		limit := d.reserve(func(held int) int {
			if room := d.maxHeld - held; room >= minClaim || held == 0 && room > 0 {
				return min(room, d.o.cfg.BatchSize)
			}
			return 0
		})
		if limit > 0 {
			claimedAt := time.Now()
			jobs, err := d.claim(ctx, limit)
			if err != nil && ctx.Err() == nil {
				d.o.log.Error().Err(err).Msg("outbox: claim failed")
			}
			d.held.Add(int64(len(jobs) - limit))
			d.enqueue(jobs, claimedAt)
			full = len(jobs) == limit
		}
		if full && d.maxHeld-int(d.held.Load()) >= minClaim {
			continue // more may be due right now
		}
		wait := d.o.cfg.PollInterval
		if d.maxHeld-int(d.held.Load()) >= minClaim {
			// With too little room to claim, the completer claims as room frees up
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

// work runs attempts for queued jobs until the queue closes.
func (d *dispatcher) work() {
	for q := range d.queue {
		r := d.runJob(q)
		d.busy.Add(-1)
		d.results <- outcome{job: q.job, r: r}
	}
}

// runJob attempts job, or releases it (no attempt used, due again at once) when the
// dispatcher is stopping, when its endpoint was halted after it was claimed, or when
// its lease, spent partly in the queue, no longer covers the attempt and its
// recording: an attempt after the lease ends could race another node's attempt of the
// same delivery. An answer that holds the endpoint halts it.
func (d *dispatcher) runJob(q queued) result {
	job := q.job
	if d.stop.Err() != nil || d.haltedSince(q) {
		return result{released: true}
	}
	p := d.o.policyOf(job.Endpoint)
	if lease := job.Delivery.LeaseUntil; lease != nil {
		need := d.o.attemptTimeout(p) + d.o.cfg.LeaseDuration/4
		if lease.Sub(d.o.cfg.Clock.Now()) < need {
			return result{released: true}
		}
	}
	r := d.o.attempt(d.attemptCtx, job, p)
	if holdsEndpoint(p, r) {
		// At once, before the completer records it: the jobs of the endpoint
		// already queued must not go out meanwhile.
		d.halt(job.Endpoint.ID)
	}
	return r
}

// enqueue queues jobs, claimed from claimedAt on, for the workers. The queue holds
// maxHeld+Workers jobs and held counts them, so this never blocks.
func (d *dispatcher) enqueue(jobs []outboxdriver.Job, claimedAt time.Time) {
	d.busy.Add(int64(len(jobs)))
	for _, job := range jobs {
		d.queue <- queued{job: job, claimedAt: claimedAt}
	}
}

// handoff carries the deliveries of one Publish straight to the workers, leased as
// they are stored (outbox.PlanFunc), skipping the claim and its commit. It takes room
// only while a worker is idle: a node with work queued claims from the store instead,
// so that deliveries already due (retries, an earlier backlog) are not starved by new
// ones.
type handoff struct {
	d         *dispatcher
	taken     int
	endpoints map[string]Endpoint // delivery id → its endpoint, for the job
	opened    time.Time           // before the store leased anything: the claim time
}

// handoff opens one, or returns nil once run is shutting down. finish must follow.
func (d *dispatcher) handoff() *handoff {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping {
		return nil
	}
	d.claiming.Add(1) // run closes the queue only after finish
	return &handoff{d: d, endpoints: map[string]Endpoint{}, opened: time.Now()}
}

// take reserves room for delivery id of ep when a worker is idle. Publishes at once
// may together queue a few jobs beyond the idle workers; held stays bounded, by
// maxHeld+Workers (see held).
func (h *handoff) take(id string, ep Endpoint) bool {
	if int(h.d.busy.Load())+h.taken >= h.d.o.cfg.Workers {
		return false
	}
	if h.d.reserve(func(held int) int {
		if held < h.d.maxHeld+h.d.o.cfg.Workers {
			return 1
		}
		return 0
	}) == 0 {
		return false
	}
	h.taken++
	h.endpoints[id] = ep
	return true
}

// finish queues the deliveries the store leased and gives back the room it did not
// use. It reports whether every delivery of pub was handed over.
func (h *handoff) finish(pub Published, err error) (all bool) {
	defer h.d.claiming.Done()
	var jobs []outboxdriver.Job
	if err == nil && !pub.Duplicate {
		for _, dl := range pub.Deliveries {
			if ep, ok := h.endpoints[dl.ID]; ok && dl.LeaseUntil != nil {
				jobs = append(jobs, outboxdriver.Job{Delivery: dl, Event: pub.Event, Endpoint: ep, Token: outboxdriver.PublishLeaseToken(dl.ID)})
			}
		}
	}
	h.d.held.Add(int64(len(jobs) - h.taken))
	h.d.enqueue(jobs, h.opened)
	return err == nil && len(jobs) == len(pub.Deliveries)
}

// minClaim is the smallest claim worth making while the node holds other deliveries:
// a quarter of a batch. Fewer, larger claims cost the single writer less than one
// per finished attempt.
func (d *dispatcher) minClaim() int { return max(1, min(d.o.cfg.BatchSize, d.maxHeld)/4) }

// reserve takes want(held) more of held at once (none when it is not positive) and
// returns how much it took: the claim loop, the completer and hand-offs all take
// room, and want sees held as it is, so none of them overfills the node.
func (d *dispatcher) reserve(want func(held int) int) int {
	for {
		cur := d.held.Load()
		n := want(int(cur))
		if n <= 0 {
			return 0
		}
		if d.held.CompareAndSwap(cur, cur+int64(n)) {
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

func (d *dispatcher) claim(ctx context.Context, limit int) ([]outboxdriver.Job, error) {
	return d.o.store.Claim(ctx, d.o.claimParams(limit))
}

func (o *Outbox) claimParams(limit int) outboxdriver.ClaimParams {
	now := o.now()
	return outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(o.cfg.LeaseDuration), Limit: limit, Token: newID("lease")}
}

// completeLoop records outcomes in batches: it takes what has arrived, writes it in one
// transaction that also claims the room the batch frees, queues what it claimed, and
// nudges the claim loop (retries possibly due). Once run stops it only records.
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
		limit := 0
		d.mu.Lock()
		claiming := !d.stopping && ctx.Err() == nil
		if claiming {
			d.claiming.Add(1)
		}
		d.mu.Unlock()
		if claiming {
			limit = d.reserve(func(held int) int {
				// Like the claim loop, take a quarter of a batch or more at once while
				// the node holds other deliveries.
				if room := d.maxHeld - held + n; room >= d.minClaim() || held == n {
					return min(d.o.cfg.BatchSize, room)
				}
				return 0
			})
		}
		claimedAt := time.Now()
		jobs := d.o.completeClaim(context.Background(), batch, limit)
		d.held.Add(int64(len(jobs) - n - limit))
		d.enqueue(jobs, claimedAt)
		if claiming {
			d.claiming.Done()
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
func (o *Outbox) completeClaim(ctx context.Context, batch []outcome, limit int) []outboxdriver.Job {
	now := o.now()
	notices := make(map[string][]Notice, len(batch))
	recorded := make(map[string]observed, len(batch)) // for Observe
	halts := map[string]bool{}                        // endpoints a decision left not taking deliveries
	var lock sync.Mutex
	build := func(oc outcome, r result) outboxdriver.Completion {
		id := oc.job.Delivery.ID
		return outboxdriver.Completion{DeliveryID: id, Token: oc.job.Token, Decide: func(cur Delivery, ep Endpoint) (outboxdriver.Change, error) {
			dec := decide(o.policyOf(ep), cur, ep, r, now, o.cfg.Rand)
			lock.Lock()
			notices[id] = dec.notices
			if ch := dec.change; o.cfg.Observe != nil && ch.Delivery != nil && ch.Attempt != nil && r.fault == nil && !r.released {
				recorded[id] = observed{*ch.Delivery, *ch.Attempt}
			}
			if ne := dec.change.Endpoint; ne != nil && !takesDeliveries(*ne, now) {
				halts[ne.ID] = true
			}
			lock.Unlock()
			return dec.change, nil
		}}
	}
	items := make([]outboxdriver.Completion, len(batch))
	for i, oc := range batch {
		items[i] = build(oc, oc.r)
	}
	var (
		applied []bool
		jobs    []outboxdriver.Job
		err     error
	)
	if limit > 0 {
		applied, jobs, err = o.store.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: items, Next: o.claimParams(limit)})
	} else {
		applied, err = o.store.Complete(ctx, items)
	}
	if err != nil {
		o.log.Error().Err(err).Int("deliveries", len(batch)).Msg("outbox: recording attempts failed; rescheduling as internal faults")
		clear(notices)
		clear(recorded)
		fault := errors.Join(errors.New("store error while recording the attempt"), err)
		for i, oc := range batch {
			items[i] = build(oc, result{fault: fault})
		}
		if _, err = o.store.Complete(ctx, items); err != nil {
			o.log.Error().Err(err).Msg("outbox: rescheduling failed; leases will expire")
		}
		return nil
	}
	if d := o.disp.Load(); d != nil {
		for id := range halts {
			d.halt(id)
		}
	}
	for i, oc := range batch {
		if !applied[i] {
			o.log.Warn().Str("delivery", oc.job.Delivery.ID).Msg("outbox: lease lost before the attempt was recorded")
			continue
		}
		for _, n := range notices[oc.job.Delivery.ID] {
			o.cfg.Notify(n)
		}
		if rec, ok := recorded[oc.job.Delivery.ID]; ok {
			o.cfg.Observe(rec.delivery, rec.attempt)
		}
	}
	return jobs
}

// observed is what Observe is shown of a recorded attempt.
type observed struct {
	delivery Delivery
	attempt  Attempt
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}
