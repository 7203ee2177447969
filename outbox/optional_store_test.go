package outbox_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// wakingStore is a store with wake-ups the test sends (outboxdriver.Waker) and a clock
// of its own (outboxdriver.Clocked), as the PostgreSQL store has.
type wakingStore struct {
	outboxdriver.Store
	wakeups chan struct{}
	// subscribed receives the context of each Wakeups call.
	subscribed chan context.Context
	claimed    signal
	clock      retry.Clock
}

func (w *wakingStore) Wakeups(ctx context.Context) <-chan struct{} {
	w.subscribed <- ctx
	return w.wakeups
}

func (w *wakingStore) Clock() retry.Clock { return w.clock }

func (w *wakingStore) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	defer w.claimed.notify()
	return w.Store.Claim(ctx, p)
}

// TestWakeupsClaimAtOnce: docs/outbox.md §5, a store that wakes the dispatcher (another
// node published) is claimed from at once, long before the poll; the subscription
// ends with Close.
func TestWakeupsClaimAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newReceiver(t, false, status(http.StatusNoContent))
	st := &wakingStore{Store: openStore(t), wakeups: make(chan struct{}, 1), subscribed: make(chan context.Context, 1),
		claimed: newSignal(), clock: retry.SystemClock{}}
	ob := startWithEndpoint(t, outbox.Config{Store: st, HTTPClient: loopbackClient(rc), PollInterval: time.Hour}, rc)
	sub := <-st.subscribed
	<-st.claimed // the first claim, before anything was published: the loop now sleeps an hour
	// Another node publishes: this outbox is not told but by the store's wake-up.
	other, err := outbox.Open(ctx, outbox.Config{Store: st.Store, HTTPClient: loopbackClient(rc)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Publish(ctx, outbox.Event{Account: "a", Type: "x"}); err != nil {
		t.Fatal(err)
	}
	st.wakeups <- struct{}{}
	waitFor(t, 10*time.Second, "the delivery after a wake-up", rc.changed, func() bool { return len(rc.requests()) == 1 })
	if err := ob.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the wake-up subscription outlived Close")
	}
}

// TestClockOfTheStore: without Config.Clock the outbox tells time by the store's clock
// when it keeps one (the database's, on PostgreSQL); a Config.Clock wins.
func TestClockOfTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storeClock := testkit.NewClock()
	storeClock.Set(time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC))
	st := &wakingStore{Store: openStore(t), wakeups: make(chan struct{}), subscribed: make(chan context.Context, 1),
		claimed: newSignal(), clock: storeClock}
	for _, c := range []struct {
		clock retry.Clock
		want  time.Time
	}{{nil, storeClock.Now()}, {testkit.NewClock(), testkit.NewClock().Now()}} {
		ob, err := outbox.Open(ctx, outbox.Config{Store: st, Clock: c.clock})
		if err != nil {
			t.Fatal(err)
		}
		pub, err := ob.Publish(ctx, outbox.Event{Account: "a", Type: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if !pub.Event.CreatedAt.Equal(c.want) {
			t.Fatalf("Config.Clock %T: published at %v, want %v", c.clock, pub.Event.CreatedAt, c.want)
		}
	}
}
