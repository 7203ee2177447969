package decide

import (
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// Result is what one claimed delivery produced.
type Result struct {
	// Attempt is the record of the HTTP attempt (Number assigned by Outcome).
	Attempt outboxdriver.Attempt
	// RetryAfter is the parsed Retry-After of the answer, from AnsweredAt: the
	// decision, made later, waits what is left of it (retryAfterFrom).
	RetryAfter    time.Duration
	HasRetryAfter bool
	AnsweredAt    time.Time
	// Fault is a failure on our side before anything was sent: no attempt is used.
	Fault error
	// FaultRetry, when positive, is the wait after Fault in place of the policy's
	// faultRetry: the dispatcher's for an outcome the store failed to record.
	FaultRetry time.Duration
	// Released means the attempt was not made, or was abandoned at shutdown: no
	// attempt is used and the delivery is due again at once.
	Released bool
}

// Outcome turns the outcome of one attempt into a Change under policy p
// (docs/outbox.md §2 step 6 and §3). It is a pure function of its inputs. The audit
// entries of the Change (a pause, a disable, a removal) are what the endpoint's owner
// is notified of once the Change is stored.
func Outcome(p policy.Policy, d outboxdriver.Delivery, ep outboxdriver.Endpoint, r Result, now time.Time, rnd retry.Rand) outboxdriver.Change {
	nd := d
	nd.LeaseUntil = nil
	nd.UpdatedAt = now
	if r.Released {
		nd.NextAttemptAt = now
		// Released unsent: it waits as the endpoint's other waiting deliveries do,
		// which a pause or disable may have ended meanwhile.
		if st, why := waitingFate(p, ep); st != "" {
			nd.Status, nd.LastError = st, why
		}
		return outboxdriver.Change{At: now, Delivery: &nd}
	}
	if r.Fault != nil {
		return fault(p, nd, r, now)
	}
	nd.FaultSince = nil
	nd.Attempts++
	a := r.Attempt
	a.DeliveryID = d.ID
	a.Number = nd.Attempts
	ne := ep
	out := outboxdriver.Change{Delivery: &nd, Attempt: &a, Endpoint: &ne}

	if a.Class == outboxdriver.ClassSuccess {
		nd.Status = outboxdriver.DeliverySucceeded
		nd.LastError = ""
		ne.Failures = 0
		ne.FailingSince = nil
		ne.LastDeliveryAt = &now
		return out
	}
	nd.LastError = attemptError(a)

	run := nd.Attempts - nd.RunStart
	// Every failure is retried on the schedule unless the profile ends it below.
	next := retry.NextScheduled(p.MaxAttempts, p.Schedule(rnd), run)
	nextAt := now.Add(next.Delay)
	counted := true
	var dead, gonePause, goneRemove bool

	switch a.Class {
	case outboxdriver.ClassGone:
		switch {
		case p.OnGone == outboxdriver.GoneDead:
			dead = true
		case p.OnGone == outboxdriver.GoneRemove:
			// Not a pause: a managed endpoint is removed too (docs/outbox.md §1
			// exempts managed endpoints from pauses only; digize removes "straight
			// away").
			goneRemove = true
		case ep.Managed:
			// An integration manages its endpoint: never paused for it.
		default:
			gonePause = true
		}
	case outboxdriver.ClassEgressRefused:
		dead = p.EgressDead
	case outboxdriver.ClassThrottled:
		counted = p.CountThrottled
		nextAt = honourRetryAfter(p, p.On429, r, true, now, next.Delay, nextAt, &ne)
	case outboxdriver.ClassHTTP5xx:
		if a.Status == 503 && r.HasRetryAfter {
			nextAt = honourRetryAfter(p, p.On503, r, false, now, next.Delay, nextAt, &ne)
		}
	}
	if counted {
		ne.Failures++
		if ne.FailingSince == nil {
			ne.FailingSince = &now
		}
	}

	switch {
	case dead:
		nd.Status = outboxdriver.DeliveryDead
	case goneRemove:
		nd.Status = outboxdriver.DeliveryFailed
	case next.Retry:
		nd.Status = outboxdriver.DeliveryPending
		nd.NextAttemptAt = nextAt
	default:
		nd.Status = outboxdriver.DeliveryFailed
	}

	out.At = now
	reason := pauseReason(a)
	switch {
	case ne.Status != outboxdriver.EndpointActive:
		// Already paused or disabled by an operator or another delivery's answer.
	case goneRemove:
		ne.RemovedAt = &now
		out.Waiting, out.WaitingReason = outboxdriver.DeliveryDropped, "endpoint removed: "+reason
		out.Audit = append(out.Audit, Audit(ep, outboxdriver.AuditRemoved, reason, now))
	case gonePause:
		Pause(p, &out, &ne, &nd, reason, now)
	case counted && autoPauseDue(p, ne, now):
		if p.AutoPause == outboxdriver.AutoPauseDisable {
			halt(p, &out, &ne, &nd, outboxdriver.EndpointDisabled, reason, now)
		} else {
			Pause(p, &out, &ne, &nd, reason, now)
		}
	}
	if nd.Status == outboxdriver.DeliveryPending {
		// The endpoint changed while this attempt was in flight.
		switch {
		case ne.RemovedAt != nil || ne.Status == outboxdriver.EndpointDisabled:
			nd.Status = outboxdriver.DeliveryDropped
		case ne.Status == outboxdriver.EndpointPaused && p.WhilePaused != outboxdriver.PausedHold:
			nd.Status = outboxdriver.DeliveryFailed
		}
	}
	return out
}

// fault reschedules a delivery that could not run because of a fault on our side,
// without using an attempt, until the policy's fault window has passed.
func fault(p policy.Policy, nd outboxdriver.Delivery, r Result, now time.Time) outboxdriver.Change {
	if nd.FaultSince == nil {
		nd.FaultSince = &now
	}
	nd.LastError = "internal: " + r.Fault.Error()
	if now.Sub(*nd.FaultSince) >= p.FaultWindow {
		nd.Status = outboxdriver.DeliveryFailed
	} else {
		wait := p.FaultRetry
		if r.FaultRetry > 0 {
			wait = r.FaultRetry
		}
		nd.Status = outboxdriver.DeliveryPending
		nd.NextAttemptAt = now.Add(wait)
	}
	return outboxdriver.Change{At: now, Delivery: &nd}
}

// honourRetryAfter applies a 429's or 503's Retry-After under action: a hold of the
// whole endpoint or a delay of this delivery. It returns this delivery's next attempt.
func honourRetryAfter(p policy.Policy, action outboxdriver.RetryAfterAction, r Result, throttled bool, now time.Time,
	scheduled time.Duration, nextAt time.Time, ne *outboxdriver.Endpoint) time.Time {
	switch action {
	case outboxdriver.RetryAfterHold:
		wait := p.HoldDefault
		if r.HasRetryAfter {
			wait = r.retryAfterFrom(now)
		} else if !throttled {
			return nextAt
		}
		until := now.Add(retry.Clamp(wait, 0, p.MaxRetryAfter))
		if ne.HoldUntil == nil || ne.HoldUntil.Before(until) {
			ne.HoldUntil = &until
		}
		if nextAt.Before(*ne.HoldUntil) {
			return *ne.HoldUntil
		}
	case outboxdriver.RetryAfterDelay:
		if r.HasRetryAfter {
			return now.Add(retry.Clamp(r.retryAfterFrom(now), scheduled, max(p.MaxRetryAfter, scheduled)))
		}
	}
	return nextAt
}

// retryAfterFrom is what is left at now of the answer's Retry-After: an HTTP date
// is a moment, and seconds count from the answer, not from when it is recorded.
func (r Result) retryAfterFrom(now time.Time) time.Duration {
	if r.AnsweredAt.IsZero() {
		return r.RetryAfter
	}
	return max(r.RetryAfter-now.Sub(r.AnsweredAt), 0)
}

// HoldsEndpoint reports whether the attempt's answer holds its whole endpoint under
// p: Outcome gives the endpoint a HoldUntil for it (honourRetryAfter).
func HoldsEndpoint(p policy.Policy, r Result) bool {
	switch {
	case r.Fault != nil || r.Released:
		return false
	case r.Attempt.Status == 429:
		return p.On429 == outboxdriver.RetryAfterHold
	case r.Attempt.Status == 503 && r.HasRetryAfter:
		return p.On503 == outboxdriver.RetryAfterHold
	}
	return false
}

// TakesDeliveries reports whether ep, as a decision left it, may be sent to at now.
func TakesDeliveries(ep outboxdriver.Endpoint, now time.Time) bool {
	return ep.Status == outboxdriver.EndpointActive && ep.RemovedAt == nil && (ep.HoldUntil == nil || !ep.HoldUntil.After(now))
}

// autoPauseDue reports whether ne's failure streak reaches the policy's threshold.
func autoPauseDue(p policy.Policy, ne outboxdriver.Endpoint, now time.Time) bool {
	if p.AutoPause == outboxdriver.AutoPauseNone || ne.Managed || ne.Failures < p.AutoPauseFailures {
		return false
	}
	return ne.FailingSince != nil && now.Sub(*ne.FailingSince) >= p.AutoPauseAfter
}

// Pause pauses ne and applies the policy's WhilePaused to the delivery nd (nil for
// an operator pause) and to the endpoint's waiting deliveries, and audits it.
func Pause(p policy.Policy, ch *outboxdriver.Change, ne *outboxdriver.Endpoint, nd *outboxdriver.Delivery, reason string, now time.Time) {
	halt(p, ch, ne, nd, outboxdriver.EndpointPaused, reason, now)
}

// halt pauses or disables ne (status), ends nd and the endpoint's waiting deliveries
// as that status does (endWaiting), and audits it.
func halt(p policy.Policy, ch *outboxdriver.Change, ne *outboxdriver.Endpoint, nd *outboxdriver.Delivery,
	status outboxdriver.EndpointStatus, reason string, now time.Time) {
	ne.Status = status
	action := outboxdriver.AuditPaused
	if status == outboxdriver.EndpointDisabled {
		ne.DisabledAt, action = &now, outboxdriver.AuditDisabled
	} else {
		ne.PausedAt = &now
	}
	ne.PauseReason = reason
	endWaiting(p, ch, *ne, nd)
	ch.Audit = append(ch.Audit, Audit(*ne, action, reason, now))
}

// endWaiting gives ep's waiting deliveries, and nd (nil: none) when it is pending,
// the status waitingFate says ep's new state gives them.
func endWaiting(p policy.Policy, ch *outboxdriver.Change, ep outboxdriver.Endpoint, nd *outboxdriver.Delivery) {
	st, why := waitingFate(p, ep)
	if st == "" {
		return
	}
	ch.Waiting, ch.WaitingReason = st, why
	if nd != nil && nd.Status == outboxdriver.DeliveryPending {
		nd.Status, nd.LastError = st, why
	}
}

// waitingFate is what becomes of a delivery that goes back to waiting on ep: nothing
// ("") while ep takes deliveries or holds them; otherwise the status and reason its
// waiting deliveries got when ep was paused (under a profile that does not hold
// them), disabled or removed (Pause, halt, the outbox's RemoveEndpoint).
func waitingFate(p policy.Policy, ep outboxdriver.Endpoint) (outboxdriver.DeliveryStatus, string) {
	switch {
	case ep.RemovedAt != nil:
		return outboxdriver.DeliveryDropped, "endpoint removed"
	case ep.Status == outboxdriver.EndpointDisabled:
		return outboxdriver.DeliveryDropped, "endpoint disabled: " + ep.PauseReason
	case ep.Status == outboxdriver.EndpointPaused && p.WhilePaused != outboxdriver.PausedHold:
		return outboxdriver.DeliveryFailed, "endpoint paused: " + ep.PauseReason
	}
	return "", ""
}

// Reaped settles a delivery whose lease expired: its attempt is counted as used (it
// may have reached the receiver) with an unknown outcome; the delivery is due again
// at once (or ends as ep's waiting deliveries did, waitingFate), or ends when that was
// its last attempt.
func Reaped(p policy.Policy, d outboxdriver.Delivery, ep outboxdriver.Endpoint, now time.Time) outboxdriver.Change {
	nd := d
	nd.LeaseUntil = nil
	nd.UpdatedAt = now
	nd.Attempts++
	a := outboxdriver.Attempt{DeliveryID: d.ID, Number: nd.Attempts, At: now, ScheduledAt: d.NextAttemptAt,
		Class: outboxdriver.ClassLeaseExpired, Error: "lease expired before the attempt was recorded; outcome unknown"}
	nd.LastError = a.Error
	switch {
	case nd.Attempts-nd.RunStart < p.MaxAttempts:
		nd.Status = outboxdriver.DeliveryPending
		nd.NextAttemptAt = now
		// It waits again, as the endpoint's waiting deliveries do: those a pause,
		// disable or removal ended while it was leased, it ends too.
		if st, why := waitingFate(p, ep); st != "" {
			nd.Status, nd.LastError = st, why
		}
	case p.ReapDead:
		nd.Status = outboxdriver.DeliveryDead
	default:
		nd.Status = outboxdriver.DeliveryFailed
	}
	return outboxdriver.Change{At: now, Delivery: &nd, Attempt: &a}
}

// pauseReasons name the answer that paused an endpoint, by its class; any other
// class is ReasonNetwork (pauseReason).
var pauseReasons = map[outboxdriver.Class]string{
	outboxdriver.ClassGone: outboxdriver.ReasonGone, outboxdriver.ClassThrottled: outboxdriver.ReasonThrottled,
	outboxdriver.ClassHTTP4xx: outboxdriver.Reason4xx, outboxdriver.ClassHTTP5xx: outboxdriver.Reason5xx,
	outboxdriver.ClassRedirect: outboxdriver.ReasonRedirect, outboxdriver.ClassTimeout: outboxdriver.ReasonTimeout,
}

// pauseReason names the answer that paused an endpoint.
func pauseReason(a outboxdriver.Attempt) string {
	if r, ok := pauseReasons[a.Class]; ok {
		return r
	}
	return outboxdriver.ReasonNetwork
}

func attemptError(a outboxdriver.Attempt) string {
	if a.Error != "" {
		return a.Error
	}
	return fmt.Sprintf("HTTP %d (%s)", a.Status, a.Class)
}

// Audit is the audit entry of action on ep at now.
func Audit(ep outboxdriver.Endpoint, action, reason string, now time.Time) outboxdriver.AuditEntry {
	return outboxdriver.AuditEntry{Account: ep.Account, EndpointID: ep.ID, Action: action, Actor: outboxdriver.ActorSystem, Reason: reason, At: now}
}
