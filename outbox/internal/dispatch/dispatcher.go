package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/ids"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Dispatcher claims due deliveries in batches, runs their attempts on a pool of
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
type Dispatcher struct {
	cfg Config
	// attemptCtx outlives the claim loop so that Close can let attempts finish; it
	// is canceled when Close gives up waiting.
	attemptCtx context.Context
	// stop is the claim loop's context: once it ends, queued jobs are released
	// without an attempt.
	stop context.Context
	// held counts the deliveries this node holds leased and has not recorded: queued,
	// in an attempt, or awaiting the completer, plus room reserved for a claim under
	// way (in its transaction: lateClaim). Claims and hand-offs keep it within
	// maxHeld; hand-offs to idle workers may take Workers more (a claim under way
	// reserves its whole batch, and such a publish must not wait for it).
	// maxHeld+Workers bounds memory and the channels below.
	held    atomic.Int64
	maxHeld int
	// busy counts jobs queued or in an attempt: fewer than Workers means a worker is
	// idle (handoff).
	busy atomic.Int64
	// backlog is not zero while the store may hold deliveries due now that no claim
	// took: a publish that stored some unleased, a claim that came back full. It keeps
	// hand-offs under maxHeld-minClaim, which leaves every recorded batch room to
	// claim (Handoff). A claim that comes back short took all of them, and clears it
	// unless it was set again meanwhile.
	backlog atomic.Int64
	queue   chan queued
	results chan outcome
	workers sync.WaitGroup
	// claiming, under mu, counts completer claims under way; stopping ends them once
	// Run shuts down, so that nothing is queued after the queue closes.
	mu       sync.Mutex
	stopping bool
	claiming sync.WaitGroup
	// halted records, per endpoint, when this node last learned that the endpoint
	// takes no deliveries for now: held (429, or 503 with Retry-After, where the
	// profile holds the endpoint), paused, disabled or removed. A job claimed before
	// that moment was claimed by someone who did not know, and is released unsent:
	// docs/outbox.md §3, a 429 "holds every delivery to the endpoint" and "uses one attempt
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
	r   decide.Result
}

// New returns a dispatcher of cfg whose attempts run under attemptCtx: canceling it
// cuts the attempts in flight (they are released, no attempt used). It starts
// nothing; Run does.
func New(cfg Config, attemptCtx context.Context) *Dispatcher {
	maxHeld := cfg.Workers + cfg.BatchSize
	bound := maxHeld + cfg.Workers // see held
	return &Dispatcher{cfg: cfg, attemptCtx: attemptCtx, maxHeld: maxHeld,
		queue: make(chan queued, bound), results: make(chan outcome, bound), halted: map[string]time.Time{}}
}

// halt records that endpoint takes no deliveries from now on, until the store says
// otherwise (a later claim). Entries older than a lease are dropped: no job waits
// that long.
func (d *Dispatcher) halt(endpoint string) {
	now := time.Now()
	d.haltMu.Lock()
	defer d.haltMu.Unlock()
	for id, at := range d.halted {
		if now.Sub(at) > d.cfg.LeaseDuration {
			delete(d.halted, id)
		}
	}
	d.halted[endpoint] = now
}

// haltedSince reports whether q's endpoint was halted after q was claimed.
func (d *Dispatcher) haltedSince(q queued) bool {
	d.haltMu.Lock()
	defer d.haltMu.Unlock()
	at, ok := d.halted[q.job.Endpoint.ID]
	return ok && q.claimedAt.Before(at)
}

// Run claims until ctx ends, then releases what is queued, waits for the attempts in
// flight, and for their records, and returns. It runs once.
func (d *Dispatcher) Run(ctx context.Context) {
	d.stop = ctx
	for range d.cfg.Workers {
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
		want := func(held int) int {
			if room := d.maxHeld - held; room >= minClaim || held == 0 && room > 0 {
				return min(room, d.cfg.BatchSize)
			}
			return 0
		}
		if want(int(d.held.Load())) > 0 {
			claimedAt := time.Now()
			late := d.lateClaim(want)
			jobs, err := d.cfg.Store.Claim(ctx, late.params)
			if err != nil && ctx.Err() == nil {
				d.cfg.Logger.Error().Err(err).Msg("outbox: claim failed")
			}
			limit := late.taken()
			d.held.Add(int64(len(jobs) - limit))
			d.enqueue(jobs, claimedAt)
			full = limit > 0 && len(jobs) == limit
			if err == nil {
				late.settle(len(jobs))
			}
		}
		if full && d.maxHeld-int(d.held.Load()) >= minClaim {
			continue // more may be due right now
		}
		wait := d.cfg.PollInterval
		if d.maxHeld-int(d.held.Load()) >= minClaim {
			// With too little room to claim, the completer claims as room frees up
			// and nudges; the earliest due time matters only when this loop can act.
			wait = d.nextWait(ctx)
		} else if d.backlog.Load() == 0 && d.dueNow(ctx) {
			// Hand-offs may be what fills the node: a delivery due in the store (a
			// retry, a release) must get room from the next recorded batch.
			d.backlog.Add(1)
		}
		resetTimer(timer, wait)
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Wake:
		case <-d.cfg.Wakeups: // nil, and never ready, without a Waker
		case <-timer.C:
		}
	}
}

// work runs attempts for queued jobs until the queue closes.
func (d *Dispatcher) work() {
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
func (d *Dispatcher) runJob(q queued) decide.Result {
	job := q.job
	if d.stop.Err() != nil || d.haltedSince(q) {
		return decide.Result{Released: true}
	}
	p := policy.Of(job.Endpoint, d.cfg.Logger)
	if lease := job.Delivery.LeaseUntil; lease != nil {
		need := p.AttemptTimeout(d.cfg.LeaseDuration) + d.cfg.LeaseDuration/4
		if lease.Sub(d.cfg.Clock.Now()) < need {
			return decide.Result{Released: true}
		}
	}
	r := d.cfg.Attempt(d.attemptCtx, job, p)
	if decide.HoldsEndpoint(p, r) {
		// At once, before the completer records it: the jobs of the endpoint
		// already queued must not go out meanwhile.
		d.halt(job.Endpoint.ID)
	}
	return r
}

// enqueue queues jobs, claimed from claimedAt on, for the workers. The queue holds
// maxHeld+Workers jobs and held counts them, so this never blocks.
func (d *Dispatcher) enqueue(jobs []outboxdriver.Job, claimedAt time.Time) {
	d.busy.Add(int64(len(jobs)))
	for _, job := range jobs {
		d.queue <- queued{job: job, claimedAt: claimedAt}
	}
}

// minClaim is the smallest claim worth making while the node holds other deliveries:
// a quarter of a batch. Fewer, larger claims cost the single writer less than one
// per finished attempt.
func (d *Dispatcher) minClaim() int { return max(1, min(d.cfg.BatchSize, d.maxHeld)/4) }

// reserve takes want(held) more of held at once (none when it is not positive) and
// returns how much it took: the claim loop, the completer and hand-offs all take
// room, and want sees held as it is, so none of them overfills the node.
func (d *Dispatcher) reserve(want func(held int) int) int {
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
func (d *Dispatcher) nextWait(ctx context.Context) time.Duration {
	wait := d.cfg.PollInterval
	due, ok, err := d.cfg.Store.NextDue(ctx)
	if err != nil || !ok {
		return wait
	}
	if until := due.Sub(d.cfg.Clock.Now()); until > 0 && until < wait {
		return until
	}
	return wait
}

// dueNow reports whether the store holds an unleased delivery due at the clock's time.
func (d *Dispatcher) dueNow(ctx context.Context) bool {
	due, ok, err := d.cfg.Store.NextDue(ctx)
	return err == nil && ok && !due.After(d.cfg.Clock.Now())
}

// lateClaim is a claim of up to BatchSize whose room is reserved in the claim's own
// transaction (outboxdriver.ClaimParams.Reserve) by want(held), as reserve does: the
// publishes that commit with it hand their deliveries over first (Handoff), and the
// claim takes the room they leave. Reserving before the claim was queued for the
// writer would keep that room from them for the whole wait.
type lateClaim struct {
	d      *Dispatcher
	params outboxdriver.ClaimParams
	once   sync.Once
	n      int
	// backlog is Dispatcher.backlog as the claim reserved its room.
	backlog int64
}

func (d *Dispatcher) lateClaim(want func(held int) int) *lateClaim {
	c := &lateClaim{d: d, params: d.claimParams(d.cfg.BatchSize)}
	c.params.Reserve = func(limit int) int {
		c.once.Do(func() {
			c.backlog = d.backlog.Load()
			c.n = d.reserve(func(held int) int { return min(limit, want(held)) })
		})
		return c.n
	}
	return c
}

// settle updates Dispatcher.backlog once the claim took claimed deliveries: a claim
// that filled its room may have left due deliveries behind; one that did not is taken
// to have emptied the backlog that was set when it reserved its room. A claim can also
// come back short while more is due (its window, the in-flight caps): the next poll
// claims those, and Run's dueNow check sets backlog again when the node has too
// little room to claim.
func (c *lateClaim) settle(claimed int) {
	n := c.taken()
	switch {
	case n == 0:
	case claimed == n:
		c.d.backlog.Add(1)
	case c.backlog != 0:
		c.d.backlog.CompareAndSwap(c.backlog, 0)
	}
}

// taken is the room the claim reserved (none when the store never asked), for the
// caller to settle once the claim has returned.
func (c *lateClaim) taken() int {
	c.once.Do(func() {})
	return c.n
}

func (d *Dispatcher) claim(ctx context.Context, limit int) ([]outboxdriver.Job, error) {
	return d.cfg.Store.Claim(ctx, d.claimParams(limit))
}

func (d *Dispatcher) claimParams(limit int) outboxdriver.ClaimParams {
	now := Now(d.cfg.Clock)
	return outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(d.cfg.LeaseDuration), Limit: limit, Token: ids.New("lease")}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}
