package retry

import (
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
)

// Policy says which failures are retried, how many times and after what wait.
type Policy struct {
	// MaxAttempts is the number of attempts in all, the first included. Values below 1
	// mean 1.
	MaxAttempts int
	// Schedule gives the wait before each retry. A schedule that runs out ends the
	// retries even when attempts are left.
	Schedule Schedule
	// Retryable says whether a class is worth another attempt.
	Retryable func(Class) bool
	// RetryAfter, when set, lets a Retry-After value replace the scheduled wait for the
	// classes it names.
	RetryAfter *RetryAfterRule
}

// RetryAfterRule says how a Retry-After value is honoured.
type RetryAfterRule struct {
	// Classes the value is honoured for (e.g. Throttled, Status5xx).
	Classes []Class
	// Min and Max bound the honoured wait. Max 0 means no upper bound.
	Min, Max time.Duration
	// AtLeastScheduled raises Min to the wait the schedule would have used.
	AtLeastScheduled bool
}

// Outcome is what one failed attempt produced.
type Outcome struct {
	Class Class
	// RetryAfter is the parsed Retry-After of the answer; HasRetryAfter says it was present.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Decision is what to do after a failed attempt.
type Decision struct {
	Retry bool
	// Delay is the wait before the next attempt when Retry is true.
	Delay time.Duration
	// Reason explains a give-up, for logs and timelines.
	Reason string
}

// NextAttempt decides what follows attempt number attempt (1 = the first) that failed
// with outcome o under policy p.
func NextAttempt(p Policy, o Outcome, attempt int) Decision {
	if o.Class == Success {
		return Decision{Reason: "succeeded"}
	}
	if p.Retryable == nil || !p.Retryable(o.Class) {
		return Decision{Reason: fmt.Sprintf("%s is not retried", o.Class)}
	}
	next := NextScheduled(p.MaxAttempts, p.Schedule, attempt)
	if !next.Retry {
		return next
	}
	delay := next.Delay
	if r := p.RetryAfter; r != nil && o.HasRetryAfter && r.honours(o.Class) {
		lo, hi := r.Min, r.Max
		if r.AtLeastScheduled {
			lo = max(lo, delay)
		}
		if hi <= 0 {
			hi = time.Duration(1<<63 - 1)
		}
		delay = Clamp(o.RetryAfter, lo, hi)
	}
	return Decision{Retry: true, Delay: delay}
}

// NextScheduled decides what follows failed attempt number attempt when the failure
// is one to retry: another attempt after the schedule's wait (none for a nil
// schedule), unless the maxAttempts (below 1: 1) are spent or the schedule ran out.
// The outbox, whose every failure is retried (its own classes, not Class, say what
// else follows), decides with it.
func NextScheduled(maxAttempts int, s Schedule, attempt int) Decision {
	if attempt >= max(maxAttempts, 1) {
		return Decision{Reason: fmt.Sprintf("retries exhausted after %d attempts", attempt)}
	}
	var delay time.Duration
	if s != nil {
		d, ok := s.Delay(attempt)
		if !ok {
			return Decision{Reason: fmt.Sprintf("schedule exhausted after %d attempts", attempt)}
		}
		delay = d
	}
	return Decision{Retry: true, Delay: delay}
}

func (r *RetryAfterRule) honours(c Class) bool {
	for _, x := range r.Classes {
		if x == c {
			return true
		}
	}
	return false
}

// CallControl turns a URL's retry policy into a decision policy: rc+1 attempts, the
// ramp schedule, and the classes rp covers (see CoveredBy).
func CallControl(p fragment.Policy) Policy {
	return Policy{
		MaxAttempts: p.MaxAttempts(),
		Schedule:    Ramp{},
		Retryable:   func(c Class) bool { return CoveredBy(c, p) },
	}
}
