package dispatch

import (
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Handoff carries the deliveries of one Publish straight to the workers, leased as
// they are stored (outboxdriver.PlanFunc), skipping the claim and its writes: while the
// node keeps up, new deliveries wait for a worker in its bounded queue rather than in
// the store. It takes room up to maxHeld while the store holds no backlog
// (Dispatcher.backlog), up to maxHeld-minClaim while it does, and, while a worker is
// idle, room beyond those up to maxHeld+Workers (see Dispatcher.held). Claims
// reserve theirs in their own transaction (lateClaim), after the publishes committed
// with them, so under a backlog every recorded batch still claims at least the room
// it frees: deliveries already due in the store (retries, an earlier backlog) are not
// starved by new ones.
type Handoff struct {
	d         *Dispatcher
	taken     int
	endpoints map[string]outboxdriver.Endpoint // delivery id → its endpoint, for the job
	opened    time.Time                        // before the store leased anything: the claim time
}

// Handoff opens one, or returns nil once Run is shutting down. Finish must follow.
func (d *Dispatcher) Handoff() *Handoff {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping {
		return nil
	}
	d.claiming.Add(1) // Run closes the queue only after Finish
	return &Handoff{d: d, endpoints: map[string]outboxdriver.Endpoint{}, opened: time.Now()}
}

// Take reserves room for delivery id of ep. Publishes at once may together queue a
// few jobs beyond the idle workers; held stays bounded, by maxHeld+Workers (see held).
func (h *Handoff) Take(id string, ep outboxdriver.Endpoint) bool {
	d := h.d
	bound := d.maxHeld // what a claim may fill
	switch {
	case int(d.busy.Load())+h.taken < d.cfg.Workers:
		bound = d.maxHeld + d.cfg.Workers // a worker is idle: never make it wait
	case d.backlog.Load() != 0:
		bound = d.maxHeld - d.minClaim()
	}
	if d.reserve(func(held int) int {
		if held < bound {
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

// Finish queues the deliveries the store leased and gives back the room it did not
// use; pub and err are what the publish returned. It reports whether every delivery
// of pub was handed over.
func (h *Handoff) Finish(pub outboxdriver.Published, err error) (all bool) {
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
	all = err == nil && len(jobs) == len(pub.Deliveries)
	if err == nil && !pub.Duplicate && !all {
		h.d.backlog.Add(1) // some stored unleased, for a claim to take
	}
	return all
}
