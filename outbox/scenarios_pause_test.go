package outbox_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// publishN publishes n events and attempts them all now.
func (h *harness) publishN(n int) []outbox.Delivery {
	h.t.Helper()
	ds := make([]outbox.Delivery, n)
	for i := range ds {
		ds[i] = h.publish()
	}
	h.run()
	return ds
}

func (h *harness) wantEndpoint(status outbox.EndpointStatus, failures int) outbox.Endpoint {
	h.t.Helper()
	ep := h.endpointNow()
	if ep.Status != status || failures >= 0 && ep.Failures != failures {
		h.t.Fatalf("endpoint %s with %d failures, want %s with %d", ep.Status, ep.Failures, status, failures)
	}
	return ep
}

// checkSajnAutoPause: paused when every attempt failed for 72 h AND at least 5 failed
// in a row; neither alone pauses; a success resets the streak; managed endpoints are
// never paused.
func checkSajnAutoPause(t *testing.T) {
	t.Run("5 failures within 72 h", func(t *testing.T) {
		h := newHarness(t, outbox.ProfileSajn, outbox.Overrides{}, status(500))
		h.publishN(5)
		h.wantEndpoint(outbox.EndpointActive, 5)
		h.clock.Advance(72*time.Hour - time.Second)
		h.publishN(1) // also retries the first five: 11 failures, still under 72 h
		h.wantEndpoint(outbox.EndpointActive, 11)
		h.clock.Advance(time.Second)
		h.publishN(1)
		ep := h.wantEndpoint(outbox.EndpointPaused, 12)
		if ep.PauseReason != outbox.Reason5xx || len(h.notices) != 1 || h.notices[0].Action != outbox.AuditPaused {
			t.Fatalf("reason %q notices %+v", ep.PauseReason, h.notices)
		}
	})
	t.Run("72 h with fewer than 5 failures", func(t *testing.T) {
		h := newHarness(t, outbox.ProfileSajn, outbox.Overrides{}, status(500))
		h.publishN(1)
		h.clock.Advance(80 * time.Hour)
		h.publishN(2) // the first delivery's retry and two new ones: 4 failures in 80 h
		h.wantEndpoint(outbox.EndpointActive, 4)
		h.publishN(1)
		h.wantEndpoint(outbox.EndpointPaused, 5)
	})
	t.Run("a success resets the streak", func(t *testing.T) {
		h := newHarness(t, outbox.ProfileSajn, outbox.Overrides{}, status(500))
		h.publishN(4)
		h.clock.Advance(73 * time.Hour)
		h.recv.setScript(status(200))
		h.publishN(1) // four retries succeed, and the new one
		ep := h.wantEndpoint(outbox.EndpointActive, 0)
		if ep.FailingSince != nil || ep.LastDeliveryAt == nil {
			t.Fatalf("failingSince %v lastDeliveryAt %v", ep.FailingSince, ep.LastDeliveryAt)
		}
	})
	t.Run("managed endpoints are never paused", func(t *testing.T) {
		h := newHarness(t, outbox.ProfileSajn, outbox.Overrides{}, status(500))
		if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Managed: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		h.publishN(6)
		h.clock.Advance(73 * time.Hour)
		h.recv.setScript(status(410))
		h.publishN(1)
		h.wantEndpoint(outbox.EndpointActive, -1)
	})
}

// checkManagedGoneRemoved: digize removes an endpoint that answers 410 even when an
// integration manages it: removal is not a pause, and docs/outbox.md §1 exempts managed
// endpoints from pauses only.
func checkManagedGoneRemoved(t *testing.T) {
	h := newHarness(t, outbox.ProfileDigize, outbox.Overrides{}, status(410))
	if _, err := h.ob.UpdateEndpoint(h.ctx, "acct", h.ep.ID, outbox.EndpointUpdate{Managed: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	h.publishN(1)
	if _, err := h.store.GetEndpoint(h.ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: h.ep.ID}); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("managed digize endpoint after a 410: %v, want removed", err)
	}
}

// checkThresholdPause: after threshold consecutive failures (and, when failingFor >
// 0, that long failing) the endpoint is paused or disabled; one fewer does nothing;
// 429s count only when counted429.
func checkThresholdPause(t *testing.T, profile string, threshold int, failingFor time.Duration,
	to outbox.EndpointStatus, waiting outbox.DeliveryStatus, counted429 bool) {
	if !counted429 {
		t.Run("429 not counted", func(t *testing.T) {
			h := newHarness(t, profile, outbox.Overrides{}, status(429))
			for range threshold + 10 {
				h.publish()
				h.run()
				if ep := h.endpointNow(); ep.HoldUntil != nil {
					h.clock.Set(*ep.HoldUntil)
				}
			}
			h.clock.Advance(failingFor)
			h.publishN(1)
			h.wantEndpoint(outbox.EndpointActive, 0)
		})
	}
	t.Run("threshold", func(t *testing.T) {
		h := newHarness(t, profile, outbox.Overrides{}, status(500))
		early := h.publishN(threshold - 1)
		h.wantEndpoint(outbox.EndpointActive, threshold-1)
		if failingFor > 0 {
			h.publishN(1)
			h.wantEndpoint(outbox.EndpointActive, threshold) // enough failures, not long enough
			h.clock.Advance(failingFor)
			h.publishN(0)
		} else {
			h.publishN(1)
		}
		ep := h.wantEndpoint(to, -1)
		if to == outbox.EndpointDisabled && ep.DisabledAt == nil || to == outbox.EndpointPaused && ep.PausedAt == nil {
			t.Fatalf("endpoint %+v lacks its time", ep)
		}
		if len(h.notices) != 1 {
			t.Fatalf("notices %+v, want one", h.notices)
		}
		if d, _ := h.delivery(early[0].ID); d.Status != waiting {
			t.Fatalf("waiting delivery %s, want %s", d.Status, waiting)
		}
		audit, _ := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 10})
		if len(audit) == 0 || audit[0].Action != map[outbox.EndpointStatus]string{
			outbox.EndpointPaused: outbox.AuditPaused, outbox.EndpointDisabled: outbox.AuditDisabled}[to] {
			t.Fatalf("audit %+v", audit)
		}
	})
}

// pausedExpect is what happens while an endpoint is paused (or disabled) and after.
type pausedExpect struct {
	// disable the endpoint through its 50-failure rule rather than an operator pause.
	disable bool
	// newDelivery is the status of a delivery created while paused ("" when none is).
	newDelivery outbox.DeliveryStatus
	// attemptZero: the new delivery carries one attempt numbered 0.
	attemptZero bool
	// waiting is the status of a delivery that was waiting when the pause began.
	waiting outbox.DeliveryStatus
	// resumeSends: resuming sends the held deliveries without a replay.
	resumeSends bool
}

// checkPaused: what a pause does to waiting and new deliveries, that nothing is sent
// while paused, and what resume (and a replay) sends.
func checkPaused(t *testing.T, profile string, want pausedExpect) {
	h := newHarness(t, profile, outbox.Overrides{}, failFirstThen(204))
	waiting := h.publish()
	h.run()
	if want.disable {
		h.recv.setScript(status(500))
		h.publishN(49)
		h.wantEndpoint(outbox.EndpointDisabled, -1)
	} else if _, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil {
		t.Fatal(err)
	}
	sent := len(h.recv.requests())
	pub, err := h.ob.Publish(h.ctx, outbox.Event{Account: "acct", Type: "call.status"})
	if err != nil {
		t.Fatal(err)
	}
	if want.newDelivery == "" {
		if len(pub.Deliveries) != 0 {
			t.Fatalf("delivery created for a disabled endpoint: %+v", pub.Deliveries)
		}
		if _, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointDisabled) {
			t.Fatalf("resume of a disabled endpoint: %v", err)
		}
		if d, _ := h.delivery(waiting.ID); d.Status != want.waiting {
			t.Fatalf("waiting delivery %s, want %s", d.Status, want.waiting)
		}
		return
	}
	fresh := pub.Deliveries[0]
	d, as := h.delivery(fresh.ID)
	if d.Status != want.newDelivery {
		t.Fatalf("new delivery %s, want %s", d.Status, want.newDelivery)
	}
	if want.attemptZero != (len(as) == 1 && as[0].Number == 0 && as[0].Class == outbox.ClassEndpointPaused) {
		t.Fatalf("attempts of the new delivery: %+v", as)
	}
	if d, _ := h.delivery(waiting.ID); d.Status != want.waiting {
		t.Fatalf("waiting delivery %s, want %s", d.Status, want.waiting)
	}
	h.clock.Advance(24 * time.Hour)
	h.run()
	if n := len(h.recv.requests()) - sent; n != 0 {
		t.Fatalf("%d requests sent while paused", n)
	}
	if _, err := h.ob.Retry(h.ctx, "acct", fresh.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointNotActive) &&
		!errors.Is(err, outbox.ErrDeliveryNotFinished) {
		t.Fatalf("retry while paused: %v", err)
	}
	if _, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil {
		t.Fatal(err)
	}
	h.wantEndpoint(outbox.EndpointActive, 0)
	h.run()
	if want.resumeSends {
		for _, id := range []string{waiting.ID, fresh.ID} {
			if d, _ := h.delivery(id); d.Status != outbox.DeliverySucceeded {
				t.Fatalf("held delivery %s after resume", d.Status)
			}
		}
		return
	}
	if n := len(h.recv.requests()) - sent; n != 0 {
		t.Fatalf("resume resent %d deliveries of the pause", n)
	}
	n, err := h.ob.Recover(h.ctx, "acct", h.ep.ID, time.Time{}, outbox.Actor{})
	if err != nil || n != 2 {
		t.Fatalf("replay queued %d, %v", n, err)
	}
	h.run()
	for _, id := range []string{waiting.ID, fresh.ID} {
		if d, _ := h.delivery(id); d.Status != outbox.DeliverySucceeded {
			t.Fatalf("replayed delivery %s", d.Status)
		}
	}
}

// checkHeaders: Standard Webhooks headers on every attempt, the delivery header where
// the profile has one, and the response stored by the rules.
func checkHeaders(t *testing.T, profile, deliveryHeader string) {
	h := newHarness(t, profile, outbox.Overrides{}, func(int, *http.Request) reply {
		return reply{status: 200, body: "plain text"}
	})
	d := h.publish()
	h.run()
	req := h.recv.requests()[0]
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		if req.header.Get(name) == "" {
			t.Fatalf("missing %s", name)
		}
	}
	if req.header.Get("webhook-id") != d.EventID {
		t.Fatalf("webhook-id %q, want the event id %q", req.header.Get("webhook-id"), d.EventID)
	}
	got := req.header.Get("digize-delivery")
	if deliveryHeader == "" && got != "" || deliveryHeader != "" && got != d.ID {
		t.Fatalf("digize-delivery %q (profile %s, delivery %s)", got, profile, d.ID)
	}
	if _, as := h.delivery(d.ID); as[0].Response != "plain text" || as[0].Class != outbox.ClassSuccess {
		t.Fatalf("stored response %q", as[0].Response)
	}
}

// Pause and Resume change an endpoint only on the way to their status: a second pause
// or resume records and notifies nothing, and a disabled endpoint refuses both.
func TestPauseAndResumeChangeOnlyOnTheWay(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	for range 2 {
		if ep, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil || ep.Status != outbox.EndpointPaused {
			t.Fatalf("pause: %s, %v", ep.Status, err)
		}
	}
	for range 2 {
		if ep, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil || ep.Status != outbox.EndpointActive {
			t.Fatalf("resume: %s, %v", ep.Status, err)
		}
	}
	log, err := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		actions = append(actions, e.Action)
	}
	if len(actions) != 3 || actions[0] != outbox.AuditResumed || actions[1] != outbox.AuditPaused || actions[2] != outbox.AuditCreated {
		t.Fatalf("audit %v, want one resume, one pause, the creation", actions)
	}
	h.mu.Lock()
	notices := len(h.notices)
	h.mu.Unlock()
	if notices != 1 {
		t.Fatalf("%d notices, want the one of the first pause", notices)
	}

	d := newHarness(t, outbox.ProfileDigize, outbox.Overrides{}, status(500))
	d.publishN(50)
	d.wantEndpoint(outbox.EndpointDisabled, -1)
	if _, err := d.ob.Pause(d.ctx, "acct", d.ep.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointDisabled) {
		t.Fatalf("pause of a disabled endpoint: %v", err)
	}
	if _, err := d.ob.Resume(d.ctx, "acct", d.ep.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointDisabled) {
		t.Fatalf("resume of a disabled endpoint: %v", err)
	}
}

// retriedStore runs an endpoint change once more before the store's own run, on the
// endpoint as an earlier read saw it (stale), as a store does that retries a
// transaction after a serialization failure.
type retriedStore struct {
	outboxdriver.Store
	stale *outbox.Endpoint
}

func (s retriedStore) UpdateEndpoint(ctx context.Context, p outboxdriver.UpdateEndpointParams) (outbox.Endpoint, error) {
	if s.stale != nil {
		if _, err := p.Change(*s.stale); err != nil {
			return outbox.Endpoint{}, err
		}
	}
	return s.Store.UpdateEndpoint(ctx, p)
}

// A pause whose transaction first ran on a stale ACTIVE endpoint and then, retried,
// found it already paused changes nothing and tells nobody: what counts is the run
// the store applied.
func TestPauseRetriedOnAPausedEndpointNotifiesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	inner := openStore(t)
	var stale outbox.Endpoint
	var notices atomic.Int32
	ob, err := outbox.Open(ctx, outbox.Config{Store: retriedStore{Store: inner, stale: &stale},
		Clock: testkit.NewClock(), Notify: func(outbox.Notice) { notices.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ob.Close(context.Background()) })
	ep, err := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: "https://example.com/hook", APIVersion: "2026-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	stale = ep // ACTIVE, as read before the pause below
	if _, err := ob.Pause(ctx, "acct", ep.ID, outbox.Actor{}); err != nil {
		t.Fatal(err)
	}
	if n := notices.Load(); n != 1 {
		t.Fatalf("%d notices after the first pause, want 1", n)
	}
	if got, err := ob.Pause(ctx, "acct", ep.ID, outbox.Actor{}); err != nil || got.Status != outbox.EndpointPaused {
		t.Fatalf("second pause: %s, %v", got.Status, err)
	}
	if n := notices.Load(); n != 1 {
		t.Fatalf("%d notices after a pause that found the endpoint paused, want 1", n)
	}
}
