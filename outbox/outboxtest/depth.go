package outboxtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// testQueueDepth: QueueDepth counts the deliveries of an active endpoint as pending
// (the oldest due one gives the lag), those of a paused endpoint as held, and shows
// an empty queue as zeros.
func testQueueDepth(t *testing.T, b Bundle) {
	st, ok := b.Store.(outboxdriver.DepthCounter)
	if !ok {
		t.Skip("the store is no outboxdriver.DepthCounter")
	}
	if d, err := st.QueueDepth(ctx, t0); err != nil || d != (outboxdriver.QueueDepth{}) {
		t.Fatalf("empty queue: %+v, %v", d, err)
	}
	paused := endpoint("ep_paused", "a")
	paused.Status, paused.PausedAt, paused.PauseReason = outboxdriver.EndpointPaused, &t0, outboxdriver.ReasonManual
	mustCreate(t, b.Store, endpoint("ep_active", "a"), paused)
	published := t0
	for i := range 3 {
		publish(t, b.Store, "a", fmt.Sprintf("evt_%d", i), published)
	}
	d, err := st.QueueDepth(ctx, published.Add(time.Second))
	if err != nil || d.Pending != 3 || d.Held != 3 || d.Failed != 0 || d.OldestDue.IsZero() || d.OldestDue.Before(published.Add(-time.Second)) {
		t.Fatalf("QueueDepth: %+v, %v; want 3 pending (due since the publish), 3 held", d, err)
	}
	if d, err := st.QueueDepth(ctx, published.Add(-time.Hour)); err != nil || !d.OldestDue.IsZero() || d.Pending != 3 {
		t.Fatalf("before they are due: %+v, %v; want no lag", d, err)
	}
}
