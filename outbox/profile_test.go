package outbox_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
)

// One table per profile: each row is a behaviour of the profile's reference document
// and of its column in docs/outbox.md §3. Time is the injected clock: nothing sleeps for
// schedule time.

type row struct {
	name string
	run  func(t *testing.T)
}

func runRows(t *testing.T, rows []row) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.run(t)
		})
	}
}

const (
	sec  = time.Second
	mins = time.Minute
	hour = time.Hour
)

func ra(profile string, code int, header string, want throttleExpect) func(t *testing.T) {
	return func(t *testing.T) { checkRetryAfter(t, profile, code, header, want) }
}

// commonRows are behaviours whose expectation differs only by the profile's first
// wait: 4xx (not 410/429) retried, timeout and redirect retried, headers, exhaustion,
// faults on our side.
func commonRows(profile string, first time.Duration, deliveryHeader string) []row {
	return []row{
		{"4xx retried", func(t *testing.T) {
			checkRetried(t, profile, outbox.Overrides{}, reply{status: 404}, outbox.ClassHTTP4xx, first)
		}},
		{"5xx retried", func(t *testing.T) {
			checkRetried(t, profile, outbox.Overrides{}, reply{status: 500}, outbox.ClassHTTP5xx, first)
		}},
		{"timeout retried, status 0", func(t *testing.T) {
			checkRetried(t, profile, outbox.Overrides{TimeoutSeconds: ptr(0.3)}, reply{hang: true}, outbox.ClassTimeout, first)
		}},
		{"redirect not followed, retried", func(t *testing.T) {
			checkRetried(t, profile, outbox.Overrides{},
				reply{status: 302, headers: map[string]string{"Location": "/elsewhere"}}, outbox.ClassRedirect, first)
		}},
		{"signature headers", func(t *testing.T) { checkHeaders(t, profile, deliveryHeader) }},
		{"exhausted is FAILED, manual retry and recover", func(t *testing.T) { checkExhausted(t, profile) }},
		{"fault on our side: renderer", func(t *testing.T) { checkRendererFault(t, profile) }},
		{"fault on our side: store", func(t *testing.T) { checkStoreFault(t, profile) }},
	}
}

// policyRow checks the static values: attempts, timeout, schemes, jitter.
func policyRow(profile string, attempts int, timeout time.Duration, httpOK bool, jitter float64) row {
	return row{"policy values", func(t *testing.T) {
		p, err := policy.Resolve(profile, outbox.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxAttempts != attempts || p.Timeout != timeout || p.AllowHTTP != httpOK || p.Jitter != jitter {
			t.Fatalf("policy %+v", p)
		}
		h := newHarness(t, profile, outbox.Overrides{}, status(204))
		_, err = h.ob.CreateEndpoint(h.ctx, outbox.EndpointSpec{Account: "acct", URL: "http://example.com/hook", Profile: profile})
		if httpOK != (err == nil) || err != nil && !errors.Is(err, outbox.ErrInvalid) {
			t.Fatalf("http endpoint under %s: %v", profile, err)
		}
		if p.Profile != profile || outbox.PingEventType != "settings.webhook.ping" {
			t.Fatalf("profile %q", p.Profile)
		}
	}}
}

func TestProfileSajn(t *testing.T) {
	p := outbox.ProfileSajn
	rows := []row{
		policyRow(p, 12, 30*sec, true, 0),
		{"12 attempts, ×6 from 10 s, cap 12 h", func(t *testing.T) {
			checkSchedule(t, p, []time.Duration{10 * sec, 60 * sec, 360 * sec, 2160 * sec, 12960 * sec,
				12 * hour, 12 * hour, 12 * hour, 12 * hour, 12 * hour, 12 * hour}, 0)
		}},
		{"410 pauses the endpoint (HTTP_410), nothing sent while paused", func(t *testing.T) {
			checkGone(t, p, goneExpect{delivery: outbox.DeliveryFailed, waiting: outbox.DeliveryFailed,
				endpoint: outbox.EndpointPaused, failures: 2})
		}},
		{"429 Retry-After seconds holds every delivery", ra(p, 429, "120", throttleExpect{next: 120 * sec, hold: 120 * sec, failures: 1})},
		{"429 Retry-After HTTP date holds every delivery", ra(p, 429, "date:300", throttleExpect{next: 300 * sec, hold: 300 * sec, failures: 1})},
		{"429 without Retry-After holds 60 s", ra(p, 429, "", throttleExpect{next: 60 * sec, hold: 60 * sec, failures: 1})},
		{"429 with an invalid Retry-After holds 60 s", ra(p, 429, "soon", throttleExpect{next: 60 * sec, hold: 60 * sec, failures: 1})},
		{"429 Retry-After 24 h holds 24 h: no 12 h cap", ra(p, 429, "86400", throttleExpect{next: 24 * hour, hold: 24 * hour, failures: 1})},
		{"429 Retry-After past the retention window holds 7 days", ra(p, 429, "864000", throttleExpect{next: 7 * 24 * hour, hold: 7 * 24 * hour, failures: 1})},
		{"503 with Retry-After is an ordinary failure", ra(p, 503, "600", throttleExpect{next: 10 * sec, failures: 1})},
		{"egress refusal is a network error, retried", func(t *testing.T) { checkEgress(t, p, outbox.DeliveryPending) }},
		{"auto-pause: 72 h and 5 failures", func(t *testing.T) { checkSajnAutoPause(t) }},
		{"while paused: new events FAILED with attempt 0; reactivate does not resend", func(t *testing.T) {
			checkPaused(t, p, pausedExpect{newDelivery: outbox.DeliveryFailed, attemptZero: true,
				waiting: outbox.DeliveryFailed})
		}},
		{"reaper: due again, FAILED when no attempt is left", func(t *testing.T) { checkReaper(t, p, 12, outbox.DeliveryFailed) }},
	}
	runRows(t, append(rows, commonRows(p, 10*sec, "")...))
}

func TestProfileDigize(t *testing.T) {
	p := outbox.ProfileDigize
	rows := []row{
		policyRow(p, 12, 5*sec, true, 0),
		{"12 tries, ×2 from 5 s, cap 1 h", func(t *testing.T) {
			checkSchedule(t, p, []time.Duration{5 * sec, 10 * sec, 20 * sec, 40 * sec, 80 * sec, 160 * sec,
				320 * sec, 640 * sec, 1280 * sec, 2560 * sec, hour}, 0)
		}},
		{"410 removes the endpoint with an audit entry", func(t *testing.T) {
			checkGone(t, p, goneExpect{delivery: outbox.DeliveryFailed, waiting: outbox.DeliveryDropped})
		}},
		{"410 removes a managed endpoint too", checkManagedGoneRemoved},
		{"429 is an ordinary failure", ra(p, 429, "120", throttleExpect{next: 5 * sec, failures: 1})},
		{"429 without Retry-After is an ordinary failure", ra(p, 429, "", throttleExpect{next: 5 * sec, failures: 1})},
		{"503 with Retry-After is an ordinary failure", ra(p, 503, "600", throttleExpect{next: 5 * sec, failures: 1})},
		{"egress refusal is a failure, retried", func(t *testing.T) { checkEgress(t, p, outbox.DeliveryPending) }},
		{"disabled after 50 failed attempts, waiting DROPPED, owners notified", func(t *testing.T) {
			checkThresholdPause(t, p, 50, 0, outbox.EndpointDisabled, outbox.DeliveryDropped, true)
		}},
		{"disabled: nothing sent, resume refused (add it again)", func(t *testing.T) {
			checkPaused(t, p, pausedExpect{disable: true, waiting: outbox.DeliveryDropped})
		}},
		{"reaper: due again, FAILED when no attempt is left", func(t *testing.T) { checkReaper(t, p, 12, outbox.DeliveryFailed) }},
	}
	runRows(t, append(rows, commonRows(p, 5*sec, "digize-delivery")...))
}

func TestProfileLucibook(t *testing.T) {
	p := outbox.ProfileLucibook
	rows := []row{
		policyRow(p, 6, 5*sec, false, 0),
		{"60, 300, 1800, 7200, 43200 s: len(schedule)+1 attempts", func(t *testing.T) {
			checkSchedule(t, p, []time.Duration{60 * sec, 300 * sec, 1800 * sec, 7200 * sec, 43200 * sec}, 0)
		}},
		{"410 marks the delivery DEAD and counts", func(t *testing.T) {
			checkGone(t, p, goneExpect{delivery: outbox.DeliveryDead, waiting: outbox.DeliveryPending,
				endpoint: outbox.EndpointActive, failures: 2})
		}},
		{"429 Retry-After seconds, not a failure", ra(p, 429, "120", throttleExpect{next: 120 * sec})},
		{"429 Retry-After HTTP date, not a failure", ra(p, 429, "date:300", throttleExpect{next: 300 * sec})},
		{"429 Retry-After below the schedule is raised to it", ra(p, 429, "10", throttleExpect{next: 60 * sec})},
		{"429 Retry-After above 12 h is capped", ra(p, 429, "86400", throttleExpect{next: 12 * hour})},
		{"429 without Retry-After follows the schedule", ra(p, 429, "", throttleExpect{next: 60 * sec})},
		{"503 with Retry-After: failure at the clamped time", ra(p, 503, "600", throttleExpect{next: 600 * sec, failures: 1})},
		{"503 with a short Retry-After: clamped to the schedule", ra(p, 503, "10", throttleExpect{next: 60 * sec, failures: 1})},
		{"503 without Retry-After follows the schedule", ra(p, 503, "", throttleExpect{next: 60 * sec, failures: 1})},
		{"egress refusal: DEAD at once", func(t *testing.T) { checkEgress(t, p, outbox.DeliveryDead) }},
		{"auto-pause after 50 failures, 429 not counted", func(t *testing.T) {
			checkThresholdPause(t, p, 50, 0, outbox.EndpointPaused, outbox.DeliveryFailed, false)
		}},
		{"while paused nothing sent; resume, then replay", func(t *testing.T) {
			checkPaused(t, p, pausedExpect{newDelivery: outbox.DeliveryFailed, waiting: outbox.DeliveryFailed})
		}},
		{"reaper: due again, DEAD when no attempt is left", func(t *testing.T) { checkReaper(t, p, 6, outbox.DeliveryDead) }},
	}
	runRows(t, append(rows, commonRows(p, 60*sec, "")...))
}

func TestProfileStandard(t *testing.T) {
	p := outbox.ProfileStandard
	rows := []row{
		policyRow(p, 10, 15*sec, false, 0.1),
		{"10 attempts, 5 s … 24 h, ±10 % jitter", func(t *testing.T) {
			checkSchedule(t, p, []time.Duration{5 * sec, 5 * mins, 30 * mins, 2 * hour, 5 * hour, 10 * hour,
				14 * hour, 20 * hour, 24 * hour}, 0.1)
		}},
		{"410 pauses the endpoint and holds its deliveries", func(t *testing.T) {
			checkGone(t, p, goneExpect{delivery: outbox.DeliveryPending, waiting: outbox.DeliveryPending,
				endpoint: outbox.EndpointPaused, failures: 2})
		}},
		{"429 Retry-After seconds: endpoint hold, not counted", ra(p, 429, "120", throttleExpect{next: 120 * sec, hold: 120 * sec})},
		{"429 Retry-After HTTP date: endpoint hold", ra(p, 429, "date:300", throttleExpect{next: 300 * sec, hold: 300 * sec})},
		{"429 Retry-After above 12 h holds 12 h", ra(p, 429, "86400", throttleExpect{next: 12 * hour, hold: 12 * hour})},
		{"429 without Retry-After: hold 60 s", ra(p, 429, "", throttleExpect{next: 60 * sec, hold: 60 * sec})},
		{"503 with Retry-After: failure and endpoint hold", ra(p, 503, "600", throttleExpect{next: 600 * sec, hold: 600 * sec, failures: 1})},
		{"egress refusal: DEAD at once", func(t *testing.T) { checkEgress(t, p, outbox.DeliveryDead) }},
		{"auto-pause after 50 failures and 24 h, held not dropped, 429 not counted", func(t *testing.T) {
			checkThresholdPause(t, p, 50, 24*hour, outbox.EndpointPaused, outbox.DeliveryPending, false)
		}},
		{"while paused new deliveries held, released on resume", func(t *testing.T) {
			checkPaused(t, p, pausedExpect{newDelivery: outbox.DeliveryPending, waiting: outbox.DeliveryPending, resumeSends: true})
		}},
		{"reaper: due again, FAILED when no attempt is left", func(t *testing.T) { checkReaper(t, p, 10, outbox.DeliveryFailed) }},
	}
	runRows(t, append(rows, commonRows(p, 0, "")...))
}

// A schedule overridden in seconds defines the run, as lucibook's "schedule + 1":
// one attempt more than it lists waits. A MaxAttempts overridden with it wins, and
// the last wait repeats; policy.Resolve reports what the dispatcher does.
func TestScheduleOverrideAndAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		o        outbox.Overrides
		attempts int
		waits    []time.Duration
	}{
		{"schedule alone", outbox.Overrides{ScheduleSeconds: []float64{2, 3}}, 3, []time.Duration{2 * sec, 3 * sec}},
		{"schedule and more attempts", outbox.Overrides{ScheduleSeconds: []float64{2, 3}, MaxAttempts: ptr(5)}, 5,
			[]time.Duration{2 * sec, 3 * sec, 3 * sec, 3 * sec}},
		{"schedule and fewer attempts", outbox.Overrides{ScheduleSeconds: []float64{2, 3}, MaxAttempts: ptr(2)}, 2, []time.Duration{2 * sec}},
		{"more attempts than the profile lists", outbox.Overrides{MaxAttempts: ptr(8)}, 8,
			[]time.Duration{60 * sec, 300 * sec, 1800 * sec, 7200 * sec, 43200 * sec, 43200 * sec, 43200 * sec}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := policy.Resolve(outbox.ProfileLucibook, tc.o)
			if err != nil || p.MaxAttempts != tc.attempts {
				t.Fatalf("policy.Resolve: MaxAttempts %d, %v; want %d", p.MaxAttempts, err, tc.attempts)
			}
			h := newHarness(t, outbox.ProfileLucibook, tc.o, status(500))
			waits, d := h.drive(h.publish().ID, 50)
			if d.Status != outbox.DeliveryFailed || d.Attempts != tc.attempts || !slices.Equal(waits, tc.waits) {
				t.Fatalf("%s after %d attempts, waits %v; want FAILED after %d, waits %v", d.Status, d.Attempts, waits, tc.attempts, tc.waits)
			}
		})
	}
}
