package outbox_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// TestWorkersBoundAttempts: the claim loop and the completer (which claims with each
// batch it records) share the pool: no more than Config.Workers attempts run at once
// even when the endpoint's own cap is far higher, and every delivery arrives.
func TestWorkersBoundAttempts(t *testing.T) {
	t.Parallel()
	const workers, events = 3, 60
	var (
		mu            sync.Mutex
		running, peak int
	)
	rc := newReceiver(t, false, func(int, *http.Request) reply {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // overlap, not schedule time
		mu.Lock()
		running--
		mu.Unlock()
		return reply{status: http.StatusNoContent}
	})
	ob := startLive(t, rc, outbox.Config{Workers: workers, BatchSize: 50})
	ctx := context.Background()
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: rc.srv.URL,
		Overrides: outbox.Overrides{AllowHTTP: ptr(true), MaxInFlight: ptr(50)}}); err != nil {
		t.Fatal(err)
	}
	for range events {
		if _, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "call.status"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 20*time.Second, "every delivery", func() bool { return len(rc.requests()) >= events })
	mu.Lock()
	defer mu.Unlock()
	if peak < 1 || peak > workers {
		t.Fatalf("%d attempts ran at once, want 1..%d (Workers)", peak, workers)
	}
}

// TestQueuedJobWithShortLeaseIsReleased: a claimed delivery that waited for a worker
// until its lease no longer covers an attempt (timeout) and its recording is released
// unsent, with no attempt used and due again at once; one that waited briefly is sent.
func TestQueuedJobWithShortLeaseIsReleased(t *testing.T) {
	t.Parallel()
	// Lease 2 min (default), attempt timeout min(15 s, 1 min) = 15 s; a job needs
	// 15 s + 30 s of lease left when its worker takes it.
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(http.StatusNoContent))
	d := h.publish()
	if _, err := h.ob.RunQueued(h.ctx, func() { h.clock.Advance(80 * time.Second) }); err != nil {
		t.Fatal(err)
	}
	got, attempts := h.delivery(d.ID)
	if n := len(h.recv.requests()); n != 0 || len(attempts) != 0 {
		t.Fatalf("released job: %d requests, %d attempts recorded, want none", n, len(attempts))
	}
	if got.Status != outbox.DeliveryPending || got.Attempts != 0 || got.LeaseUntil != nil || !got.NextAttemptAt.Equal(h.clock.Now()) {
		t.Fatalf("released delivery = %+v, want PENDING, 0 attempts, no lease, due now", got)
	}

	if _, err := h.ob.RunQueued(h.ctx, func() { h.clock.Advance(70 * time.Second) }); err != nil {
		t.Fatal(err)
	}
	if got, _ = h.delivery(d.ID); got.Status != outbox.DeliverySucceeded || len(h.recv.requests()) != 1 {
		t.Fatalf("after a 70 s wait (50 s of lease left): status %s, %d requests, want SUCCEEDED after 1", got.Status, len(h.recv.requests()))
	}
}
