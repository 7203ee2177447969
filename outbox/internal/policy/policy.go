package policy

import (
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// Policy is every value that decides how deliveries to one endpoint behave: a
// profile's defaults with the endpoint's Overrides applied (see Resolve).
type Policy struct {
	Profile string
	// MaxAttempts counts every attempt of a run, the first included.
	MaxAttempts int
	// Waits, when set, is the list of waits between attempts, its last wait repeating
	// when MaxAttempts asks for more retries than it lists; otherwise the wait before
	// retry k is First * Factor^(k-1), at most Cap.
	Waits  []time.Duration
	First  time.Duration
	Factor float64
	Cap    time.Duration
	// Jitter spreads each wait over ±Jitter of it (0.1 = ±10 %).
	Jitter float64
	// Timeout bounds one attempt, connect and response together.
	Timeout time.Duration
	// AllowHTTP permits http:// URLs; https is always allowed.
	AllowHTTP bool

	OnGone outboxdriver.GoneAction
	// On429 and On503 (503 carrying Retry-After) say how Retry-After is honoured.
	On429 outboxdriver.RetryAfterAction
	On503 outboxdriver.RetryAfterAction
	// CountThrottled says whether a 429 counts toward the auto-pause threshold.
	CountThrottled bool
	// HoldDefault is the endpoint hold when a 429 has no valid Retry-After.
	HoldDefault time.Duration
	// MaxRetryAfter bounds any honoured Retry-After.
	MaxRetryAfter time.Duration
	// EgressDead marks a delivery DEAD at once when the egress rules refuse its
	// destination; otherwise the refusal is retried like a network error.
	EgressDead bool

	// AutoPause acts after AutoPauseFailures consecutive failed attempts, once the
	// endpoint has been failing for at least AutoPauseAfter.
	AutoPause         outboxdriver.AutoPauseAction
	AutoPauseFailures int
	AutoPauseAfter    time.Duration
	WhilePaused       outboxdriver.PausedAction
	// ReapDead marks DEAD, rather than FAILED, a delivery whose lease expired on its
	// last attempt.
	ReapDead bool

	// FaultRetry is the wait after a fault on our side (no attempt used), for up to
	// FaultWindow, after which the delivery is FAILED.
	FaultRetry  time.Duration
	FaultWindow time.Duration
	// DeliveryHeader, when set, names a header carrying the delivery id
	// ("digize-delivery").
	DeliveryHeader string
	// MaxInFlight caps the deliveries of the endpoint leased at once, across nodes: its
	// concurrent attempts and those waiting for a worker or for their record.
	MaxInFlight int
}

// Schedule returns the policy's waits as a retry schedule; rnd spreads them when the
// policy has jitter (nil: no spreading).
func (p Policy) Schedule(rnd retry.Rand) retry.Schedule {
	var s retry.Schedule
	if p.Waits != nil {
		s = retry.RepeatLast(p.Waits)
	} else {
		s = retry.Exponential{First: p.First, Factor: p.Factor, Cap: p.Cap}
	}
	if p.Jitter > 0 && rnd != nil {
		s = retry.Jittered{Schedule: s, Fraction: p.Jitter, Rand: rnd}
	}
	return s
}

// Names lists the built-in profiles.
var Names = []string{outboxdriver.ProfileSajn, outboxdriver.ProfileDigize, outboxdriver.ProfileLucibook, outboxdriver.ProfileStandard}

// common holds the values every profile shares (docs/outbox.md §3).
func common(name string) Policy {
	return Policy{
		Profile:       name,
		HoldDefault:   60 * time.Second,
		MaxRetryAfter: 12 * time.Hour,
		FaultRetry:    5 * time.Minute,
		FaultWindow:   24 * time.Hour,
		MaxInFlight:   10,
		OnGone:        outboxdriver.GonePause,
		On429:         outboxdriver.RetryAfterIgnore,
		On503:         outboxdriver.RetryAfterIgnore,
		WhilePaused:   outboxdriver.PausedHold,
		AutoPause:     outboxdriver.AutoPauseNone,
	}
}

// Profile returns the policy of a built-in profile (docs/outbox.md §3) and whether it
// exists.
func Profile(name string) (Policy, bool) {
	p := common(name)
	switch name {
	case outboxdriver.ProfileSajn:
		p.MaxAttempts = 12
		p.First, p.Factor, p.Cap = 10*time.Second, 6, 12*time.Hour
		p.Timeout = 30 * time.Second
		p.AllowHTTP = true
		p.OnGone = outboxdriver.GonePause
		p.On429 = outboxdriver.RetryAfterHold
		// sajn holds until Retry-After with no clamp of its own: only the retention
		// window (7 days) bounds it (docs/outbox.md §3). The 12 h clamp is lucibook's.
		p.MaxRetryAfter = maxWait
		p.CountThrottled = true
		p.AutoPause, p.AutoPauseFailures, p.AutoPauseAfter = outboxdriver.AutoPausePause, 5, 72*time.Hour
		p.WhilePaused = outboxdriver.PausedLogFailed
	case outboxdriver.ProfileDigize:
		p.MaxAttempts = 12
		p.First, p.Factor, p.Cap = 5*time.Second, 2, time.Hour
		p.Timeout = 5 * time.Second
		p.AllowHTTP = true
		p.OnGone = outboxdriver.GoneRemove
		p.CountThrottled = true
		p.AutoPause, p.AutoPauseFailures = outboxdriver.AutoPauseDisable, 50
		p.DeliveryHeader = "digize-delivery"
	case outboxdriver.ProfileLucibook:
		p.Waits = seconds(60, 300, 1800, 7200, 43200)
		p.MaxAttempts = len(p.Waits) + 1
		p.Timeout = 5 * time.Second
		p.OnGone = outboxdriver.GoneDead
		p.On429, p.On503 = outboxdriver.RetryAfterDelay, outboxdriver.RetryAfterDelay
		p.EgressDead = true
		p.AutoPause, p.AutoPauseFailures = outboxdriver.AutoPausePause, 50
		p.WhilePaused = outboxdriver.PausedFail
		p.ReapDead = true
	case outboxdriver.ProfileStandard:
		p.Waits = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
		p.MaxAttempts = 10
		p.Jitter = 0.1
		p.Timeout = 15 * time.Second
		p.OnGone = outboxdriver.GonePause
		p.On429, p.On503 = outboxdriver.RetryAfterHold, outboxdriver.RetryAfterHold
		p.EgressDead = true
		p.AutoPause, p.AutoPauseFailures, p.AutoPauseAfter = outboxdriver.AutoPausePause, 50, 24*time.Hour
		p.WhilePaused = outboxdriver.PausedHold
	default:
		return Policy{}, false
	}
	return p, true
}

func seconds(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}
