package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// The scenarios below each exercise one behaviour of docs/outbox.md §3 for one profile;
// profile_test.go lists them, one table per profile, with that profile's expectations.

// checkSchedule: every attempt answers 500; the waits between attempts and the number
// of attempts are the profile's, and the delivery ends FAILED (not DEAD).
func checkSchedule(t *testing.T, profile string, want []time.Duration, jitter float64) {
	h := newHarness(t, profile, outbox.Overrides{}, status(500))
	d := h.publish()
	waits, d := h.drive(d.ID, 100)
	if d.Status != outbox.DeliveryFailed {
		t.Fatalf("status %s, want FAILED", d.Status)
	}
	if d.Attempts != len(want)+1 {
		t.Fatalf("attempts %d, want %d", d.Attempts, len(want)+1)
	}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	spread := false
	for i := range want {
		lo := time.Duration(float64(want[i]) * (1 - jitter))
		hi := time.Duration(float64(want[i]) * (1 + jitter))
		if waits[i] < lo || waits[i] > hi {
			t.Fatalf("wait %d = %v, want %v ±%v%%", i+1, waits[i], want[i], jitter*100)
		}
		if waits[i] != want[i] {
			spread = true
		}
	}
	if jitter > 0 && !spread {
		t.Fatalf("waits %v carry no jitter", waits)
	}
	if got := len(h.recv.requests()); got != d.Attempts {
		t.Fatalf("receiver got %d requests, want %d", got, d.Attempts)
	}
}

// goneExpect is what a 410 does under a profile.
type goneExpect struct {
	delivery outbox.DeliveryStatus // the delivery that got the 410
	waiting  outbox.DeliveryStatus // another delivery of the endpoint, waiting
	endpoint outbox.EndpointStatus // "" when the endpoint is removed
	failures int                   // endpoint failures after the 500 and the 410
}

// checkGone: one delivery fails with 500 and waits; another gets 410.
func checkGone(t *testing.T, profile string, want goneExpect) {
	h := newHarness(t, profile, outbox.Overrides{}, failFirstThen(410))
	waiting := h.publish()
	h.run()
	gone := h.publish()
	h.run()
	if d, as := h.delivery(gone.ID); d.Status != want.delivery || as[len(as)-1].Class != outbox.ClassGone {
		t.Fatalf("410 delivery: %s (%v), want %s", d.Status, as, want.delivery)
	}
	if d, _ := h.delivery(waiting.ID); d.Status != want.waiting {
		t.Fatalf("waiting delivery: %s, want %s", d.Status, want.waiting)
	}
	ep, err := h.store.GetEndpoint(h.ctx, outboxdriver.GetEndpointParams{Account: "acct", ID: h.ep.ID})
	if want.endpoint == "" {
		if !errors.Is(err, outbox.ErrNotFound) {
			t.Fatalf("endpoint not removed: %v %v", ep.Status, err)
		}
		entries, _ := h.ob.ListAudit(h.ctx, outbox.AuditQuery{Account: "acct", Limit: 10})
		if len(entries) == 0 || entries[0].Action != outbox.AuditRemoved || entries[0].Reason != outbox.ReasonGone {
			t.Fatalf("audit %+v, want a removal for HTTP_410", entries)
		}
		if len(h.notices) != 1 || h.notices[0].Action != outbox.AuditRemoved {
			t.Fatalf("notices %+v", h.notices)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if ep.Status != want.endpoint || ep.Failures != want.failures {
		t.Fatalf("endpoint %s failures %d, want %s %d", ep.Status, ep.Failures, want.endpoint, want.failures)
	}
	if want.endpoint == outbox.EndpointPaused {
		if ep.PauseReason != outbox.ReasonGone || ep.PausedAt == nil {
			t.Fatalf("pause reason %q at %v", ep.PauseReason, ep.PausedAt)
		}
		// Nothing is sent while paused, however long.
		before := len(h.recv.requests())
		h.clock.Advance(48 * time.Hour)
		h.publish()
		h.run()
		if got := len(h.recv.requests()); got != before {
			t.Fatalf("%d requests sent while paused", got-before)
		}
	}
}

// throttleExpect is what a 429 or a 503 with Retry-After does.
type throttleExpect struct {
	next     time.Duration // this delivery's next attempt after the answer
	hold     time.Duration // endpoint hold (0: none)
	failures int           // endpoint failures after the answer
}

// checkRetryAfter: the first answer is code with the Retry-After header value
// retryAfter ("" for none; "date:N" for an HTTP date N seconds ahead); later answers
// are 204. It checks the delivery's next attempt, the endpoint hold (another delivery
// is not sent before it ends), the failure count, and that one attempt was used.
func checkRetryAfter(t *testing.T, profile string, code int, retryAfter string, want throttleExpect) {
	var h *harness
	h = newHarness(t, profile, outbox.Overrides{}, func(n int, _ *http.Request) reply {
		if n > 0 {
			return reply{status: 204}
		}
		rep := reply{status: code, headers: map[string]string{}}
		var secs int
		if _, err := fmt.Sscanf(retryAfter, "date:%d", &secs); err == nil {
			rep.headers["Retry-After"] = h.clock.Now().Add(time.Duration(secs) * time.Second).Format(http.TimeFormat)
		} else if retryAfter != "" {
			rep.headers["Retry-After"] = retryAfter
		}
		return rep
	})
	t0 := h.clock.Now()
	first := h.publish()
	h.run()
	d, as := h.delivery(first.ID)
	if d.Status != outbox.DeliveryPending || d.Attempts != 1 || len(as) != 1 {
		t.Fatalf("delivery %s attempts %d, want PENDING with one attempt used", d.Status, d.Attempts)
	}
	if got := d.NextAttemptAt.Sub(t0); got != want.next {
		t.Fatalf("next attempt after %v, want %v", got, want.next)
	}
	ep := h.endpointNow()
	if ep.Failures != want.failures {
		t.Fatalf("failures %d, want %d", ep.Failures, want.failures)
	}
	switch {
	case want.hold == 0 && ep.HoldUntil != nil:
		t.Fatalf("endpoint held until %v, want no hold", ep.HoldUntil)
	case want.hold > 0 && (ep.HoldUntil == nil || ep.HoldUntil.Sub(t0) != want.hold):
		t.Fatalf("endpoint hold %v, want %v", ep.HoldUntil, want.hold)
	}
	second := h.publish()
	if want.hold > 0 {
		h.clock.Set(t0.Add(want.hold - time.Second))
		if n := h.run(); n != 0 {
			t.Fatalf("%d deliveries sent during the hold", n)
		}
		if d, _ := h.delivery(second.ID); d.Attempts != 0 {
			t.Fatalf("held delivery used %d attempts", d.Attempts)
		}
		h.clock.Set(t0.Add(want.hold))
	}
	h.run()
	if d, _ := h.delivery(second.ID); d.Status != outbox.DeliverySucceeded {
		t.Fatalf("other delivery %s after the hold", d.Status)
	}
}

// checkEgress: the default egress rules refuse loopback; the refusal is classed
// egress_refused and nothing reaches the receiver.
func checkEgress(t *testing.T, profile string, want outbox.DeliveryStatus) {
	h := newHarness(t, profile, outbox.Overrides{}, status(204))
	ob := h.another(outbox.Config{}) // default rules
	d := h.publish()
	h.runOn(ob)
	d, as := h.delivery(d.ID)
	if d.Status != want || len(as) != 1 || as[0].Class != outbox.ClassEgressRefused || as[0].Status != 0 {
		t.Fatalf("delivery %s attempts %+v, want %s after one egress_refused", d.Status, as, want)
	}
	if h.endpointNow().Failures != 1 {
		t.Fatalf("failures %d, want 1", h.endpointNow().Failures)
	}
	if n := len(h.recv.requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// checkRetried: an answer that is an ordinary failure is retried on the schedule with
// the given class and counted; first is the profile's first wait.
func checkRetried(t *testing.T, profile string, o outbox.Overrides, rep reply, class outbox.AttemptClass, first time.Duration) {
	arrived := make(chan struct{}, 1)
	h := newHarness(t, profile, o, func(int, *http.Request) reply {
		select {
		case arrived <- struct{}{}:
		default: // a second request fails the count below
		}
		return rep
	})
	ob := h.ob
	if rep.hang {
		// The attempt's timeout is real and short: it reaches the request only once the
		// receiver has it, so that the one request counted below never races the
		// connect and the TLS handshake on a slow machine.
		client := loopbackClient(h.recv)
		client.Transport = testkit.CancelAfterArrival(client.Transport, arrived)
		ob = h.another(outbox.Config{HTTPClient: client})
	}
	t0 := h.clock.Now()
	d := h.publish()
	h.runOn(ob)
	d, as := h.delivery(d.ID)
	if d.Status != outbox.DeliveryPending || len(as) != 1 || as[0].Class != class {
		t.Fatalf("delivery %s attempts %+v, want PENDING after one %s", d.Status, as, class)
	}
	if first > 0 && d.NextAttemptAt.Sub(t0) != first {
		t.Fatalf("next after %v, want %v", d.NextAttemptAt.Sub(t0), first)
	}
	if h.endpointNow().Failures != 1 {
		t.Fatalf("failures %d, want 1", h.endpointNow().Failures)
	}
	if rep.hang && as[0].Status != 0 {
		t.Fatalf("status %d, want 0 when nothing answered", as[0].Status)
	}
	if n := len(h.recv.requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1 (redirects are not followed)", n)
	}
}

// checkExhausted: after the last attempt the delivery is FAILED; a manual retry sends
// it again with a fresh budget; a pending delivery cannot be retried.
func checkExhausted(t *testing.T, profile string) {
	h := newHarness(t, profile, outbox.Overrides{}, status(500))
	d := h.publish()
	if _, err := h.ob.Retry(h.ctx, "acct", d.ID, outbox.Actor{}); !errors.Is(err, outbox.ErrDeliveryNotFinished) {
		t.Fatalf("retry of a pending delivery: %v", err)
	}
	_, d = h.drive(d.ID, 100)
	if d.Status != outbox.DeliveryFailed {
		t.Fatalf("status %s, want FAILED", d.Status)
	}
	h.reactivateAfterExhaustion(profile, d.ID)
	h.recv.setScript(status(200))
	if _, err := h.ob.Retry(h.ctx, "acct", d.ID, outbox.Actor{}); err != nil {
		t.Fatal(err)
	}
	h.run()
	got, as := h.delivery(d.ID)
	if got.Status != outbox.DeliverySucceeded || len(as) != d.Attempts+1 {
		t.Fatalf("after retry: %s with %d attempts", got.Status, len(as))
	}
	// Bulk recover: another exhausted delivery comes back too.
	h.recv.setScript(status(500))
	d2 := h.publish()
	_, d2 = h.drive(d2.ID, 100)
	h.reactivateAfterExhaustion(profile, d2.ID)
	h.recv.setScript(status(204))
	n, err := h.ob.Recover(h.ctx, "acct", h.ep.ID, d2.CreatedAt, outbox.Actor{})
	if err != nil || n != 1 {
		t.Fatalf("recover: %d %v", n, err)
	}
	h.run()
	if got, _ := h.delivery(d2.ID); got.Status != outbox.DeliverySucceeded {
		t.Fatalf("recovered delivery %s", got.Status)
	}
}

// reactivateAfterExhaustion resumes a sajn endpoint: its streak ran 72 h with at least
// 5 failures, so it was paused about when the delivery ran out (as sajn documents).
// Other profiles must still be active.
func (h *harness) reactivateAfterExhaustion(profile, deliveryID string) {
	h.t.Helper()
	ep := h.endpointNow()
	if ep.Status == outbox.EndpointActive {
		return
	}
	if profile != outbox.ProfileSajn {
		h.t.Fatalf("%s endpoint %s at exhaustion", profile, ep.Status)
	}
	if _, err := h.ob.Retry(h.ctx, "acct", deliveryID, outbox.Actor{}); !errors.Is(err, outbox.ErrEndpointNotActive) {
		h.t.Fatalf("retry while paused: %v", err)
	}
	if _, err := h.ob.Resume(h.ctx, "acct", h.ep.ID, outbox.Actor{}); err != nil {
		h.t.Fatal(err)
	}
}

// checkRendererFault: a fault on our side (the renderer fails) reschedules the
// delivery every 5 minutes without using an attempt, for 24 hours, then FAILED.
func checkRendererFault(t *testing.T, profile string) {
	h := newHarness(t, profile, outbox.Overrides{}, status(204))
	ob := h.another(outbox.Config{HTTPClient: loopbackClient(h.recv),
		Renderer: func(context.Context, outbox.Event, outbox.Endpoint) ([]byte, error) {
			return nil, errors.New("template missing")
		}})
	t0 := h.clock.Now()
	d := h.publish()
	for i := range 3 {
		if _, err := ob.RunDue(h.ctx); err != nil {
			t.Fatal(err)
		}
		d, _ = h.delivery(d.ID)
		if d.Status != outbox.DeliveryPending || d.Attempts != 0 || d.NextAttemptAt.Sub(h.clock.Now()) != 5*time.Minute {
			t.Fatalf("fault %d: %s attempts %d next %v", i, d.Status, d.Attempts, d.NextAttemptAt.Sub(h.clock.Now()))
		}
		h.clock.Set(d.NextAttemptAt)
	}
	h.clock.Set(t0.Add(24 * time.Hour))
	h.runOn(ob)
	if d, _ = h.delivery(d.ID); d.Status != outbox.DeliveryFailed || d.Attempts != 0 {
		t.Fatalf("after 24 h of faults: %s with %d attempts", d.Status, d.Attempts)
	}
	if n := len(h.recv.requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// failingStore fails Complete a set number of times, as a store outage would.
type failingStore struct {
	outboxdriver.Store
	failures int
}

func (f *failingStore) Complete(ctx context.Context, cs []outboxdriver.Completion) ([]bool, error) {
	if f.failures > 0 {
		f.failures--
		return nil, errors.New("disk I/O error")
	}
	return f.Store.Complete(ctx, cs)
}

func (f *failingStore) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	if f.failures > 0 {
		f.failures--
		return nil, nil, errors.New("disk I/O error")
	}
	return f.Store.CompleteClaim(ctx, p)
}

// checkStoreFault: the store fails while recording an attempt; the delivery is
// rescheduled one lease term later (what the reaper would wait had the reschedule
// failed too), not after the policy's 5-minute faultRetry, and no attempt is used.
func checkStoreFault(t *testing.T, profile string) {
	h := newHarness(t, profile, outbox.Overrides{}, status(500))
	const lease = 7 * time.Second
	ob := h.another(outbox.Config{Store: &failingStore{Store: h.store, failures: 1}, HTTPClient: loopbackClient(h.recv), LeaseDuration: lease})
	d := h.publish()
	h.runOn(ob)
	d, as := h.delivery(d.ID)
	if d.Status != outbox.DeliveryPending || d.Attempts != 0 || len(as) != 0 || d.NextAttemptAt.Sub(h.clock.Now()) != lease {
		t.Fatalf("after a store fault: %s attempts %d next %v", d.Status, d.Attempts, d.NextAttemptAt.Sub(h.clock.Now()))
	}
	if d.FaultSince == nil || d.LastError == "" {
		t.Fatalf("fault not recorded: %+v", d)
	}
}

// checkReaper: a claim whose process died is reclaimed when its lease expires: due
// again at once with attempts left; FAILED (or DEAD) on its last attempt.
func checkReaper(t *testing.T, profile string, lastAttempts int, last outbox.DeliveryStatus) {
	h := newHarness(t, profile, outbox.Overrides{}, status(500))
	d := h.publish()
	if n, _ := h.ob.ClaimOnly(h.ctx); n != 1 {
		t.Fatalf("claimed %d", n)
	}
	if n, _ := h.ob.Reap(h.ctx); n != 0 {
		t.Fatalf("reaped %d deliveries before the lease expired", n)
	}
	h.clock.Advance(2*time.Minute + time.Second)
	if n, err := h.ob.Reap(h.ctx); n != 1 || err != nil {
		t.Fatalf("reaped %d, %v", n, err)
	}
	got, as := h.delivery(d.ID)
	if got.Status != outbox.DeliveryPending || got.Attempts != 1 || !got.NextAttemptAt.Equal(h.clock.Now()) ||
		as[0].Class != outbox.ClassLeaseExpired {
		t.Fatalf("reaped with attempts left: %s attempts %d next %v", got.Status, got.Attempts, got.NextAttemptAt)
	}
	// Use all but the last attempt, then lose the last one.
	for got.Attempts < lastAttempts-1 {
		h.clock.Set(got.NextAttemptAt)
		if h.run() == 0 {
			t.Fatalf("nothing due after %d attempts (%s)", got.Attempts, got.Status)
		}
		got, _ = h.delivery(d.ID)
	}
	h.clock.Set(got.NextAttemptAt)
	if n, _ := h.ob.ClaimOnly(h.ctx); n != 1 {
		t.Fatalf("claimed %d", n)
	}
	h.clock.Advance(2*time.Minute + time.Second)
	if n, _ := h.ob.Reap(h.ctx); n != 1 {
		t.Fatalf("reaped %d", n)
	}
	if got, _ = h.delivery(d.ID); got.Status != last || got.Attempts != lastAttempts {
		t.Fatalf("reaped on the last attempt: %s attempts %d, want %s %d", got.Status, got.Attempts, last, lastAttempts)
	}
}

// TestReapedOrReleasedDeliveryFollowsItsEndpoint: a delivery leased when its endpoint
// was paused, disabled or removed waits again as the endpoint's other waiting
// deliveries do once it comes back (lease expired, or released unsent): FAILED under
// a profile that ends them at a pause (sajn), PENDING where the profile holds them
// (standard), DROPPED after a removal.
func TestReapedOrReleasedDeliveryFollowsItsEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		profile string
		stop    func(h *harness) error
		want    outbox.DeliveryStatus
	}{
		{"sajn paused", outbox.ProfileSajn, func(h *harness) error { _, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, outbox.Actor{}); return err }, outbox.DeliveryFailed},
		{"standard paused", outbox.ProfileStandard, func(h *harness) error { _, err := h.ob.Pause(h.ctx, "acct", h.ep.ID, outbox.Actor{}); return err }, outbox.DeliveryPending},
		{"removed", outbox.ProfileStandard, func(h *harness) error { return h.ob.RemoveEndpoint(h.ctx, "acct", h.ep.ID, outbox.Actor{}) }, outbox.DeliveryDropped},
	} {
		t.Run(tc.name+", reaped", func(t *testing.T) {
			h := newHarness(t, tc.profile, outbox.Overrides{}, status(http.StatusNoContent))
			d := h.publish()
			if n, _ := h.ob.ClaimOnly(h.ctx); n != 1 {
				t.Fatalf("claimed %d", n)
			}
			if err := tc.stop(h); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(2*time.Minute + time.Second)
			if n, err := h.ob.Reap(h.ctx); n != 1 || err != nil {
				t.Fatalf("reaped %d, %v", n, err)
			}
			if got, _ := h.delivery(d.ID); got.Status != tc.want {
				t.Fatalf("reaped delivery %s (%s), want %s", got.Status, got.LastError, tc.want)
			}
		})
		t.Run(tc.name+", released", func(t *testing.T) {
			h := newHarness(t, tc.profile, outbox.Overrides{}, status(http.StatusNoContent))
			d := h.publish()
			// Claimed, then the endpoint stops, then the job waited in the queue past
			// what its lease covers: released unsent.
			if _, err := h.ob.RunQueued(h.ctx, func() {
				if err := tc.stop(h); err != nil {
					t.Fatal(err)
				}
				h.clock.Advance(100 * time.Second)
			}); err != nil {
				t.Fatal(err)
			}
			if got, as := h.delivery(d.ID); got.Status != tc.want || len(as) != 0 || len(h.recv.requests()) != 0 {
				t.Fatalf("released delivery %s (%s), %d attempts, %d requests; want %s, none sent", got.Status, got.LastError, len(as), len(h.recv.requests()), tc.want)
			}
		})
	}
}
