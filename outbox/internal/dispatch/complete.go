package dispatch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// completeLoop records outcomes in batches: it takes what has arrived, writes it in one
// transaction that also claims the room the batch frees, queues what it claimed, and
// nudges the claim loop (retries possibly due). Once Run stops it only records.
func (d *Dispatcher) completeLoop(ctx context.Context) {
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
		d.mu.Lock()
		claiming := !d.stopping && ctx.Err() == nil
		if claiming {
			d.claiming.Add(1)
		}
		d.mu.Unlock()
		var late *lateClaim
		if claiming {
			late = d.lateClaim(func(held int) int {
				// Like the claim loop, take a quarter of a batch or more at once while
				// the node holds other deliveries.
				if room := d.maxHeld - held + n; room >= d.minClaim() || held == n {
					return min(d.cfg.BatchSize, room)
				}
				return 0
			})
		}
		claimedAt := time.Now()
		jobs, recorded := d.completeClaim(context.Background(), batch, late)
		limit := 0
		if late != nil {
			limit = late.taken()
			if recorded {
				late.settle(len(jobs))
			}
		}
		d.held.Add(int64(len(jobs) - n - limit))
		d.enqueue(jobs, claimedAt)
		if claiming {
			d.claiming.Done()
		}
		d.nudge()
	}
}

// complete records a batch of outcomes. When the store fails, the batch is recorded
// again as faults on our side, no attempt used, due again one lease term later; when
// that fails too, the leases expire and the reaper takes over after the same term.
// Either way a delivery whose outcome was lost is attempted again about one lease
// term after the store failed, not after the policy's faultRetry (5 min by default,
// docs/outbox.md §3): a dropped connection or a database failover would otherwise
// hold every delivery in flight at that moment for minutes.
func (d *Dispatcher) complete(ctx context.Context, batch []outcome) {
	d.completeClaim(ctx, batch, nil)
}

// completeClaim is complete, making claim in the same transaction when it is not nil;
// it returns the jobs claimed and whether the batch was recorded as it came (false
// when the store failed, and then nothing was claimed).
func (d *Dispatcher) completeClaim(ctx context.Context, batch []outcome, claim *lateClaim) ([]outboxdriver.Job, bool) {
	now := Now(d.cfg.Clock)
	notices := make(map[string][]notice, len(batch))
	recorded := make(map[string]observed, len(batch)) // for the log and Observe
	halts := map[string]bool{}                        // endpoints a decision left not taking deliveries
	var lock sync.Mutex
	build := func(oc outcome, r decide.Result) outboxdriver.Completion {
		id := oc.job.Delivery.ID
		leased := oc.job.Delivery
		return outboxdriver.Completion{DeliveryID: id, Token: oc.job.Token, Delivery: &leased, Decide: func(cur outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			ch := decide.Outcome(policy.Of(ep, d.cfg.Logger), cur, ep, r, now, d.cfg.Rand)
			lock.Lock()
			notices[id] = noticesOf(ch, ep)
			if ch.Delivery != nil && ch.Attempt != nil && r.Fault == nil && !r.Released {
				recorded[id] = observed{*ch.Delivery, *ch.Attempt, ep.URL}
			}
			if ne := ch.Endpoint; ne != nil && !decide.TakesDeliveries(*ne, now) {
				halts[ne.ID] = true
			}
			lock.Unlock()
			return ch, nil
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
	if claim != nil {
		applied, jobs, err = d.cfg.Store.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: items, Next: claim.params})
	} else {
		applied, err = d.cfg.Store.Complete(ctx, items)
	}
	if err != nil {
		d.cfg.Logger.Error().Err(err).Int("deliveries", len(batch)).Msg("outbox: recording attempts failed; rescheduling as internal faults")
		clear(notices)
		clear(recorded)
		fault := errors.Join(errors.New("store error while recording the attempt"), err)
		for i, oc := range batch {
			items[i] = build(oc, decide.Result{Fault: fault, FaultRetry: d.cfg.LeaseDuration})
		}
		if _, err = d.cfg.Store.Complete(ctx, items); err != nil {
			d.cfg.Logger.Error().Err(err).Msg("outbox: rescheduling failed; leases will expire")
		}
		return nil, false
	}
	for id := range halts {
		d.halt(id)
	}
	for i, oc := range batch {
		if !applied[i] {
			d.cfg.Logger.Warn().Str("delivery", oc.job.Delivery.ID).Msg("outbox: lease lost before the attempt was recorded")
			continue
		}
		for _, n := range notices[oc.job.Delivery.ID] {
			d.cfg.Notify(n.entry, n.url)
		}
		if rec, ok := recorded[oc.job.Delivery.ID]; ok {
			d.logFailed(rec)
			if d.cfg.Observe != nil {
				d.cfg.Observe(rec.delivery, rec.attempt)
			}
		}
	}
	return jobs, true
}

// observed is what the log and Observe are shown of a recorded attempt.
type observed struct {
	delivery outboxdriver.Delivery
	attempt  outboxdriver.Attempt
	url      string
}

// logFailed logs a failed attempt at warn, with what an operator needs to find it
// in the delivery log: a receiver that keeps failing shows in the logs at once, not
// only when its deliveries are given up days later (docs/outbox.md §7).
func (d *Dispatcher) logFailed(rec observed) {
	a, dl := rec.attempt, rec.delivery
	if a.Class == outboxdriver.ClassSuccess {
		return
	}
	ev := d.cfg.Logger.Warn().Str("account", dl.Account).Str("endpoint", dl.EndpointID).Str("url", rec.url).
		Str("delivery", dl.ID).Str("event", dl.EventID).Str("type", dl.EventType).Int("attempt", a.Number).
		Int("status", a.Status).Str("class", string(a.Class)).Dur("duration", a.Duration).Str("delivery_status", string(dl.Status))
	if a.Error != "" {
		ev = ev.Str("error", a.Error)
	}
	if dl.Status == outboxdriver.DeliveryPending {
		ev = ev.Time("next_attempt_at", dl.NextAttemptAt)
	}
	ev.Msg("outbox: delivery attempt failed")
}
