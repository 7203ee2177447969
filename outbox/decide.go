package outbox

import (
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/retry"
)

// result is what one claimed delivery produced.
type result struct {
	// attempt is the record of the HTTP attempt (Number assigned by decide).
	attempt Attempt
	// retryAfter is the parsed Retry-After of the answer, from answeredAt: the
	// decision, made later, waits what is left of it (retryAfterFrom).
	retryAfter    time.Duration
	hasRetryAfter bool
	answeredAt    time.Time
	// fault is a failure on our side before anything was sent: no attempt is used.
	fault error
	// released means the attempt was abandoned at shutdown: no attempt is used and the
	// delivery is due again at once.
	released bool
}

// Notice tells the owner of an endpoint that the outbox paused, disabled or removed
// it (OUTBOX.md §3: owners are notified). The embedding program delivers it (an
// operational webhook, e-mail).
type Notice struct {
	Account    string
	EndpointID string
	URL        string
	// Action is one of AuditPaused, AuditDisabled, AuditRemoved.
	Action string
	Reason string
	At     time.Time
}

// decision is the outboxdriver.Change for one outcome plus the notices to send once it is stored.
type decision struct {
	change  outboxdriver.Change
	notices []Notice
}

// decide turns the outcome of one attempt into a outboxdriver.Change under policy p
// (OUTBOX.md §2 step 6 and §3). It is a pure function of its inputs.
func decide(p Policy, d Delivery, ep Endpoint, r result, now time.Time, rnd retry.Rand) decision {
	nd := d
	nd.LeaseUntil = nil
	nd.UpdatedAt = now
	if r.released {
		nd.NextAttemptAt = now
		// Released unsent: it waits as the endpoint's other waiting deliveries do,
		// which a pause or disable may have ended meanwhile.
		if st, why := waitingFate(p, ep); st != "" {
			nd.Status, nd.LastError = st, why
		}
		return decision{change: outboxdriver.Change{At: now, Delivery: &nd}}
	}
	if r.fault != nil {
		return decideFault(p, nd, r.fault, now)
	}
	nd.FaultSince = nil
	nd.Attempts++
	a := r.attempt
	a.DeliveryID = d.ID
	a.Number = nd.Attempts
	out := decision{change: outboxdriver.Change{Delivery: &nd, Attempt: &a}}
	ne := ep
	out.change.Endpoint = &ne

	if a.Class == ClassSuccess {
		nd.Status = DeliverySucceeded
		nd.LastError = ""
		ne.Failures = 0
		ne.FailingSince = nil
		ne.LastDeliveryAt = &now
		return out
	}
	nd.LastError = attemptError(a)

	run := nd.Attempts - nd.RunStart
	next := retry.NextAttempt(retry.Policy{
		MaxAttempts: p.MaxAttempts,
		Schedule:    p.Schedule(rnd),
		Retryable:   func(retry.Class) bool { return true }, // every answer is retried unless the profile ends it below
	}, retry.Outcome{Class: a.Class}, run)
	nextAt := now.Add(next.Delay)
	counted := true
	var dead, gonePause, goneRemove bool

	switch a.Class {
	case ClassGone:
		switch {
		case p.OnGone == GoneDead:
			dead = true
		case p.OnGone == GoneRemove:
			// Not a pause: a managed endpoint is removed too (OUTBOX.md §1 exempts
			// managed endpoints from pauses only; digize removes "straight away").
			goneRemove = true
		case ep.Managed:
			// An integration manages its endpoint: never paused for it.
		default:
			gonePause = true
		}
	case ClassEgressRefused:
		dead = p.EgressDead
	case ClassThrottled:
		counted = p.CountThrottled
		nextAt = honourRetryAfter(p, p.On429, r, true, now, next.Delay, nextAt, &ne)
	case ClassHTTP5xx:
		if a.Status == 503 && r.hasRetryAfter {
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
		nd.Status = DeliveryDead
	case goneRemove:
		nd.Status = DeliveryFailed
	case next.Retry:
		nd.Status = DeliveryPending
		nd.NextAttemptAt = nextAt
	default:
		nd.Status = DeliveryFailed
	}

	out.change.At = now
	reason := pauseReason(a)
	switch {
	case ne.Status != EndpointActive:
		// Already paused or disabled by an operator or another delivery's answer.
	case goneRemove:
		ne.RemovedAt = &now
		out.change.Waiting, out.change.WaitingReason = DeliveryDropped, "endpoint removed: "+reason
		out.change.Audit = append(out.change.Audit, audit(ep, AuditRemoved, reason, now))
		out.notices = append(out.notices, notice(ep, AuditRemoved, reason, now))
	case gonePause:
		out.notices = append(out.notices, pauseEndpoint(p, &out.change, &ne, &nd, reason, now))
	case counted && autoPauseDue(p, ne, now):
		if p.AutoPause == AutoPauseDisable {
			out.notices = append(out.notices, disableEndpoint(p, &out.change, &ne, &nd, reason, now))
		} else {
			out.notices = append(out.notices, pauseEndpoint(p, &out.change, &ne, &nd, reason, now))
		}
	}
	if nd.Status == DeliveryPending {
		// The endpoint changed while this attempt was in flight.
		switch {
		case ne.RemovedAt != nil || ne.Status == EndpointDisabled:
			nd.Status = DeliveryDropped
		case ne.Status == EndpointPaused && p.WhilePaused != PausedHold:
			nd.Status = DeliveryFailed
		}
	}
	return out
}

// decideFault reschedules a delivery that could not run because of a fault on our
// side, without using an attempt, until the policy's fault window has passed.
func decideFault(p Policy, nd Delivery, fault error, now time.Time) decision {
	if nd.FaultSince == nil {
		nd.FaultSince = &now
	}
	nd.LastError = "internal: " + fault.Error()
	if now.Sub(*nd.FaultSince) >= p.FaultWindow {
		nd.Status = DeliveryFailed
	} else {
		nd.Status = DeliveryPending
		nd.NextAttemptAt = now.Add(p.FaultRetry)
	}
	return decision{change: outboxdriver.Change{At: now, Delivery: &nd}}
}

// honourRetryAfter applies a 429's or 503's Retry-After under action: a hold of the
// whole endpoint or a delay of this delivery. It returns this delivery's next attempt.
func honourRetryAfter(p Policy, action RetryAfterAction, r result, throttled bool, now time.Time,
	scheduled time.Duration, nextAt time.Time, ne *Endpoint) time.Time {
	switch action {
	case RetryAfterHold:
		wait := p.HoldDefault
		if r.hasRetryAfter {
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
	case RetryAfterDelay:
		if r.hasRetryAfter {
			return now.Add(retry.Clamp(r.retryAfterFrom(now), scheduled, max(p.MaxRetryAfter, scheduled)))
		}
	}
	return nextAt
}

// retryAfterFrom is what is left at now of the answer's Retry-After: an HTTP date
// is a moment, and seconds count from the answer, not from when it is recorded.
func (r result) retryAfterFrom(now time.Time) time.Duration {
	if r.answeredAt.IsZero() {
		return r.retryAfter
	}
	return max(r.retryAfter-now.Sub(r.answeredAt), 0)
}

// holdsEndpoint reports whether the attempt's answer holds its whole endpoint under
// p: decide gives the endpoint a HoldUntil for it (honourRetryAfter).
func holdsEndpoint(p Policy, r result) bool {
	switch {
	case r.fault != nil || r.released:
		return false
	case r.attempt.Status == 429:
		return p.On429 == RetryAfterHold
	case r.attempt.Status == 503 && r.hasRetryAfter:
		return p.On503 == RetryAfterHold
	}
	return false
}

// takesDeliveries reports whether ep, as a decision left it, may be sent to at now.
func takesDeliveries(ep Endpoint, now time.Time) bool {
	return ep.Status == EndpointActive && ep.RemovedAt == nil && (ep.HoldUntil == nil || !ep.HoldUntil.After(now))
}

// autoPauseDue reports whether ne's failure streak reaches the policy's threshold.
func autoPauseDue(p Policy, ne Endpoint, now time.Time) bool {
	if p.AutoPause == AutoPauseNone || ne.Managed || ne.Failures < p.AutoPauseFailures {
		return false
	}
	return ne.FailingSince != nil && now.Sub(*ne.FailingSince) >= p.AutoPauseAfter
}

// pauseEndpoint pauses ne and applies the policy's WhilePaused to the delivery nd
// (nil for an operator pause) and to the endpoint's waiting deliveries.
func pauseEndpoint(p Policy, ch *outboxdriver.Change, ne *Endpoint, nd *Delivery, reason string, now time.Time) Notice {
	ne.Status = EndpointPaused
	ne.PausedAt = &now
	ne.PauseReason = reason
	endWaiting(p, ch, *ne, nd)
	ch.Audit = append(ch.Audit, audit(*ne, AuditPaused, reason, now))
	return notice(*ne, AuditPaused, reason, now)
}

// disableEndpoint disables ne and drops its waiting deliveries, nd among them.
func disableEndpoint(p Policy, ch *outboxdriver.Change, ne *Endpoint, nd *Delivery, reason string, now time.Time) Notice {
	ne.Status = EndpointDisabled
	ne.DisabledAt = &now
	ne.PauseReason = reason
	endWaiting(p, ch, *ne, nd)
	ch.Audit = append(ch.Audit, audit(*ne, AuditDisabled, reason, now))
	return notice(*ne, AuditDisabled, reason, now)
}

// endWaiting gives ep's waiting deliveries, and nd (nil: none) when it is pending,
// the status waitingFate says ep's new state gives them.
func endWaiting(p Policy, ch *outboxdriver.Change, ep Endpoint, nd *Delivery) {
	st, why := waitingFate(p, ep)
	if st == "" {
		return
	}
	ch.Waiting, ch.WaitingReason = st, why
	if nd != nil && nd.Status == DeliveryPending {
		nd.Status, nd.LastError = st, why
	}
}

// waitingFate is what becomes of a delivery that goes back to waiting on ep: nothing
// ("") while ep takes deliveries or holds them; otherwise the status and reason its
// waiting deliveries got when ep was paused (under a profile that does not hold
// them), disabled or removed (pauseEndpoint, disableEndpoint, RemoveEndpoint).
func waitingFate(p Policy, ep Endpoint) (DeliveryStatus, string) {
	switch {
	case ep.RemovedAt != nil:
		return DeliveryDropped, "endpoint removed"
	case ep.Status == EndpointDisabled:
		return DeliveryDropped, "endpoint disabled: " + ep.PauseReason
	case ep.Status == EndpointPaused && p.WhilePaused != PausedHold:
		return DeliveryFailed, "endpoint paused: " + ep.PauseReason
	}
	return "", ""
}

// decideReaped settles a delivery whose lease expired: its attempt is counted as used
// (it may have reached the receiver) with an unknown outcome; the delivery is due
// again at once (or ends as ep's waiting deliveries did, waitingFate), or ends when
// that was its last attempt.
func decideReaped(p Policy, d Delivery, ep Endpoint, now time.Time) outboxdriver.Change {
	nd := d
	nd.LeaseUntil = nil
	nd.UpdatedAt = now
	nd.Attempts++
	a := Attempt{DeliveryID: d.ID, Number: nd.Attempts, At: now, ScheduledAt: d.NextAttemptAt,
		Class: ClassLeaseExpired, Error: "lease expired before the attempt was recorded; outcome unknown"}
	nd.LastError = a.Error
	switch {
	case nd.Attempts-nd.RunStart < p.MaxAttempts:
		nd.Status = DeliveryPending
		nd.NextAttemptAt = now
		// It waits again, as the endpoint's waiting deliveries do: those a pause,
		// disable or removal ended while it was leased, it ends too.
		if st, why := waitingFate(p, ep); st != "" {
			nd.Status, nd.LastError = st, why
		}
	case p.ReapDead:
		nd.Status = DeliveryDead
	default:
		nd.Status = DeliveryFailed
	}
	return outboxdriver.Change{At: now, Delivery: &nd, Attempt: &a}
}

// pauseReason names the answer that paused an endpoint.
func pauseReason(a Attempt) string {
	switch a.Class {
	case ClassGone:
		return ReasonGone
	case ClassThrottled:
		return ReasonThrottled
	case ClassHTTP4xx:
		return Reason4xx
	case ClassHTTP5xx:
		return Reason5xx
	case ClassRedirect:
		return ReasonRedirect
	case ClassTimeout:
		return ReasonTimeout
	default:
		return ReasonNetwork
	}
}

func attemptError(a Attempt) string {
	if a.Error != "" {
		return a.Error
	}
	return fmt.Sprintf("HTTP %d (%s)", a.Status, a.Class)
}

func audit(ep Endpoint, action, reason string, now time.Time) AuditEntry {
	return AuditEntry{Account: ep.Account, EndpointID: ep.ID, Action: action, Reason: reason, At: now}
}

func notice(ep Endpoint, action, reason string, now time.Time) Notice {
	return Notice{Account: ep.Account, EndpointID: ep.ID, URL: ep.URL, Action: action, Reason: reason, At: now}
}
