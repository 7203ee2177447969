package decide

import (
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// pausedError starts the last error of a delivery ended by its endpoint's pause.
const pausedError = "endpoint paused"

// Plan is delivery id of a new event ev to ep, by ep's status and the policy's
// WhilePaused (docs/outbox.md §3 "while paused"): none (false) to a disabled
// endpoint; to a paused one, FAILED, with attempt 0 when the policy logs it so.
func Plan(p policy.Policy, ev outboxdriver.Event, ep outboxdriver.Endpoint, id string, now time.Time) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
	d := outboxdriver.Delivery{
		ID: id, Account: ev.Account, EventID: ev.ID, EventType: ev.Type, EndpointID: ep.ID,
		Status: outboxdriver.DeliveryPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now,
	}
	switch ep.Status {
	case outboxdriver.EndpointDisabled:
		return outboxdriver.Delivery{}, nil, false
	case outboxdriver.EndpointPaused:
		switch p.WhilePaused {
		case outboxdriver.PausedLogFailed:
			d.Status = outboxdriver.DeliveryFailed
			d.LastError = pausedError + ": " + ep.PauseReason
			return d, &outboxdriver.Attempt{DeliveryID: d.ID, Number: 0, At: now, ScheduledAt: now,
				Class: outboxdriver.ClassEndpointPaused, Error: d.LastError}, true
		case outboxdriver.PausedFail:
			d.Status = outboxdriver.DeliveryFailed
			d.LastError = pausedError + ": " + ep.PauseReason
		}
	}
	return d, nil, true
}

// Requeue starts a new run of d: PENDING, due at now, its attempt budget counted from
// here (a manual retry).
func Requeue(d outboxdriver.Delivery, now time.Time) outboxdriver.Delivery {
	d.Status = outboxdriver.DeliveryPending
	d.RunStart = d.Attempts
	d.NextAttemptAt = now
	d.FaultSince = nil
	d.LastError = ""
	d.UpdatedAt = now
	return d
}
