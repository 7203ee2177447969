package pgstore_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
)

// QueueDepth counts the deliveries of an active endpoint as pending (the oldest
// due one gives the lag), those of a paused endpoint as held, and shows an empty
// queue as zeros.
func TestQueueDepth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t, pgstore.Options{})
	if d, err := st.QueueDepth(ctx, time.Now()); err != nil || d != (pgstore.QueueDepth{}) {
		t.Fatalf("empty queue: %+v, %v", d, err)
	}
	ob, err := outbox.Open(ctx, outbox.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ob.Close(ctx) })
	if _, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: "https://a.example/hook"}); err != nil {
		t.Fatal(err)
	}
	paused, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "a", URL: "https://b.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Pause(ctx, "a", paused.ID, outbox.Actor{}); err != nil {
		t.Fatal(err)
	}
	published := time.Now()
	for range 3 {
		if _, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "call.status", Data: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := st.QueueDepth(ctx, time.Now().Add(time.Second))
	if err != nil || d.Pending != 3 || d.Held != 3 || d.Failed != 0 || d.OldestDue.IsZero() || d.OldestDue.Before(published.Add(-time.Second)) {
		t.Fatalf("QueueDepth: %+v, %v; want 3 pending (due since the publish), 3 held", d, err)
	}
	if d, err := st.QueueDepth(ctx, published.Add(-time.Hour)); err != nil || !d.OldestDue.IsZero() || d.Pending != 3 {
		t.Fatalf("before they are due: %+v, %v; want no lag", d, err)
	}
}
