package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// newIdle is a dispatcher of 2 workers and claims of 8 (maxHeld 10, minClaim 2) that
// runs nothing, its workers all busy.
func newIdle(t *testing.T) *Dispatcher {
	t.Helper()
	d := New(Config{Workers: 2, BatchSize: 8, LeaseDuration: time.Minute, Clock: retry.SystemClock{}}, context.Background())
	d.busy.Store(2)
	return d
}

// takes counts the deliveries one hand-off takes before the node refuses one.
func takes(d *Dispatcher) int {
	h := d.Handoff()
	defer d.claiming.Done()
	n := 0
	for h.Take(string(rune('a'+n)), outboxdriver.Endpoint{ID: "ep"}) {
		n++
	}
	return n
}

// TestHandoffBounds: with no backlog a hand-off fills the node to maxHeld; with one,
// to a quarter of a claim short of it; one for each idle worker whatever the node holds
// (up to maxHeld+Workers).
func TestHandoffBounds(t *testing.T) {
	if n := takes(newIdle(t)); n != 10 {
		t.Fatalf("no backlog: took %d, want maxHeld 10", n)
	}
	d := newIdle(t)
	d.backlog.Store(1)
	if n := takes(d); n != 8 {
		t.Fatalf("backlog: took %d, want maxHeld-minClaim 8", n)
	}
	d = newIdle(t)
	d.busy.Store(0)
	d.backlog.Store(1)
	d.held.Store(9) // claims filled the node, and both workers are idle
	if n := takes(d); n != 2 || d.held.Load() != 11 {
		t.Fatalf("idle workers: took %d (held %d), want one for each idle worker", n, d.held.Load())
	}
}

// TestLateClaimSettles: a late claim reserves when the store asks, once, and what it
// took settles the backlog: a full claim sets it, a short one clears what it saw, not
// what was set after.
func TestLateClaimSettles(t *testing.T) {
	d := newIdle(t)
	d.held.Store(4)
	room := func(held int) int { return d.maxHeld - held }
	c := d.lateClaim(room)
	if c.taken() != 0 {
		t.Fatal("reserved before the store asked")
	}
	c = d.lateClaim(room)
	if n := c.params.Reserved().Limit; n != 6 || c.params.Reserve(8) != 6 || d.held.Load() != 10 {
		t.Fatalf("reserved %d (held %d), want the room 6 once", n, d.held.Load())
	}
	c.settle(6)
	if d.backlog.Load() == 0 {
		t.Fatal("a full claim left no backlog")
	}
	d.held.Store(0)
	c = d.lateClaim(room)
	c.params.Reserved()
	d.backlog.Add(1) // a publish stored some unleased after the claim read
	c.settle(3)
	if d.backlog.Load() == 0 {
		t.Fatal("a short claim cleared a backlog set after it read")
	}
	c = d.lateClaim(room)
	c.params.Reserved()
	c.settle(3)
	if d.backlog.Load() != 0 {
		t.Fatal("a short claim left the backlog it saw")
	}
}
