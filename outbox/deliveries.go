package outbox

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// DefaultListLimit and MaxListLimit bound listings.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// GetEvent returns one event of the account, or ErrNotFound (also for another
// account's event).
func (o *Outbox) GetEvent(ctx context.Context, account, id string) (Event, error) {
	return o.store.GetEvent(ctx, outboxdriver.GetEventParams{Account: account, ID: id})
}

// ListEvents returns the account's events, oldest first (q.Limit defaults to 50, at
// most 500).
func (o *Outbox) ListEvents(ctx context.Context, q EventQuery) ([]Event, error) {
	q.Limit = listLimit(q.Limit)
	return o.store.ListEvents(ctx, q)
}

// GetDelivery returns one delivery of the account with all its attempts, oldest
// first, or ErrNotFound (also for another account's delivery).
func (o *Outbox) GetDelivery(ctx context.Context, account, id string) (Delivery, []Attempt, error) {
	return o.store.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: account, ID: id})
}

// ListDeliveries returns deliveries, newest first (q.Limit defaults to 50, at most
// 500). A status that is not a delivery status is invalid.
func (o *Outbox) ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error) {
	switch q.Status {
	case "", DeliveryPending, DeliverySucceeded, DeliveryFailed, DeliveryDead, DeliveryDropped:
	default:
		return nil, invalid("status", "%q: want PENDING, SUCCEEDED, FAILED, DEAD or DROPPED", q.Status)
	}
	q.Limit = listLimit(q.Limit)
	return o.store.ListDeliveries(ctx, q)
}

// ListAudit returns the account's audit log, newest first (q.Limit defaults to 50, at
// most 500; q.BeforeID continues after an entry).
func (o *Outbox) ListAudit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	q.Limit = listLimit(q.Limit)
	return o.store.ListAudit(ctx, q)
}

// Retry sends a finished delivery again, with a fresh attempt budget, as soon as the
// dispatcher gets to it; an audit entry (AuditRetried) names by. It fails with
// ErrDeliveryNotFinished for a PENDING delivery, ErrEndpointNotActive when its
// endpoint is paused or disabled (resume first), and ErrNotFound when the delivery,
// or its endpoint, is gone.
func (o *Outbox) Retry(ctx context.Context, account, deliveryID string, by Actor) (Delivery, error) {
	now := o.now()
	d, err := o.store.UpdateDelivery(ctx, outboxdriver.UpdateDeliveryParams{Account: account, ID: deliveryID, Decide: func(d Delivery, ep Endpoint) (outboxdriver.Change, error) {
		switch {
		case ep.RemovedAt != nil:
			return outboxdriver.Change{}, ErrNotFound
		case ep.Status != EndpointActive:
			return outboxdriver.Change{}, ErrEndpointNotActive
		case !d.Status.Finished():
			return outboxdriver.Change{}, ErrDeliveryNotFinished
		}
		nd := decide.Requeue(d, now)
		audit := []AuditEntry{{Account: account, EndpointID: d.EndpointID, DeliveryID: d.ID, Action: AuditRetried,
			Reason: "was " + string(d.Status), At: now}}
		by.stamp(audit)
		return outboxdriver.Change{At: now, Delivery: &nd, Audit: audit}, nil
	}})
	if err == nil {
		o.nudge()
	}
	return d, err
}

// Recover retries every FAILED delivery of an active endpoint created at or after
// since, and returns how many it queued; an audit entry (AuditRecovered, its Count
// that number) names by. It fails with ErrNotFound for an endpoint that is not there
// and ErrEndpointNotActive for a paused or disabled one, and then queues nothing.
func (o *Outbox) Recover(ctx context.Context, account, endpointID string, since time.Time, by Actor) (int, error) {
	ep, err := o.store.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: account, ID: endpointID})
	if err != nil {
		return 0, err
	}
	if ep.Status != EndpointActive {
		return 0, ErrEndpointNotActive
	}
	now := o.now()
	reason := "FAILED deliveries"
	if !since.IsZero() {
		reason += " since " + since.UTC().Format(time.RFC3339)
	}
	audit := []AuditEntry{{Account: account, EndpointID: endpointID, Action: AuditRecovered, Reason: reason, At: now}}
	by.stamp(audit)
	n, err := o.store.Recover(ctx, outboxdriver.RecoverParams{Account: account, EndpointID: endpointID, Since: since, Now: now, Audit: &audit[0]})
	if n > 0 {
		o.nudge()
	}
	return n, err
}

func listLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	}
	return n
}
