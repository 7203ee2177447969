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
