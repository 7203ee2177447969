package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// sentinels are the errors an outbox error wraps (errors.go).
var sentinels = []error{ErrNotFound, ErrInvalid, ErrConflict, ErrEndpointNotActive, ErrEndpointDisabled,
	ErrDeliveryNotFinished, ErrClosed, ErrUnavailable, context.Canceled, context.DeadlineExceeded}

// storeErr makes an error of the store that wraps none of the sentinels (a busy or
// locked database, an I/O error) wrap ErrUnavailable, so that callers can tell it
// from bad input with errors.Is.
func storeErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// checked passes a store method's results on with its error through storeErr.
func checked[T any](v T, err error) (T, error) { return v, storeErr(err) }

// checked2 is checked for the methods with two results besides the error.
func checked2[T, U any](v T, w U, err error) (T, U, error) { return v, w, storeErr(err) }

// checkedStore is the Store the Outbox works through: the same store, its errors
// passed through storeErr, and the endpoints' signing keys sealed on their way in
// and opened on their way out (Config.Secrets): every decision sees them opened, the
// store only ever holds them sealed.
type checkedStore struct {
	s   outboxdriver.Store
	box SecretSealer
}

var _ outboxdriver.Store = checkedStore{}

func (c checkedStore) CreateEndpoint(ctx context.Context, p outboxdriver.CreateEndpointParams) error {
	var err error
	if p.Endpoint, err = sealEndpoint(c.box, p.Endpoint); err != nil {
		return err
	}
	return storeErr(c.s.CreateEndpoint(ctx, p))
}

func (c checkedStore) GetEndpoint(ctx context.Context, p outboxdriver.GetEndpointParams) (Endpoint, error) {
	ep, err := c.s.GetEndpoint(ctx, p)
	if err != nil {
		return ep, storeErr(err)
	}
	return openEndpoint(c.box, ep)
}

func (c checkedStore) ListEndpoints(ctx context.Context, account string) ([]Endpoint, error) {
	eps, err := c.s.ListEndpoints(ctx, account)
	if err != nil {
		return eps, storeErr(err)
	}
	for i := range eps {
		if eps[i], err = openEndpoint(c.box, eps[i]); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

func (c checkedStore) UpdateEndpoint(ctx context.Context, p outboxdriver.UpdateEndpointParams) (Endpoint, error) {
	change := p.Change
	p.Change = func(ep Endpoint) (outboxdriver.Change, error) { return sealedChange(c.box, ep, change) }
	ep, err := c.s.UpdateEndpoint(ctx, p)
	if err != nil {
		return ep, storeErr(err)
	}
	return openEndpoint(c.box, ep)
}

// Publish plans each delivery on its endpoint with the keys opened (the publish
// hand-off attempts it with them); one that cannot be opened is planned as stored,
// and its attempt fails to sign, as a fault.
func (c checkedStore) Publish(ctx context.Context, p outboxdriver.PublishParams) (Published, error) {
	plan := p.Plan
	p.Plan = func(ep Endpoint) (Delivery, *Attempt, bool) {
		if opened, err := openEndpoint(c.box, ep); err == nil {
			ep = opened
		}
		return plan(ep)
	}
	return checked(c.s.Publish(ctx, p))
}

func (c checkedStore) GetEvent(ctx context.Context, p outboxdriver.GetEventParams) (Event, error) {
	return checked(c.s.GetEvent(ctx, p))
}

func (c checkedStore) ListEvents(ctx context.Context, q EventQuery) ([]Event, error) {
	return checked(c.s.ListEvents(ctx, q))
}

func (c checkedStore) Claim(ctx context.Context, p outboxdriver.ClaimParams) ([]outboxdriver.Job, error) {
	jobs, err := c.s.Claim(ctx, p)
	return openJobs(c.box, jobs, storeErr(err))
}

func (c checkedStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	return checked2(c.s.NextDue(ctx))
}

// decided wraps the decisions of completions: each sees its endpoint's keys opened.
func (c checkedStore) decided(outcomes []outboxdriver.Completion) []outboxdriver.Completion {
	out := make([]outboxdriver.Completion, len(outcomes))
	for i, oc := range outcomes {
		oc.Decide = c.openedDecision(oc.Decide)
		out[i] = oc
	}
	return out
}

func (c checkedStore) Complete(ctx context.Context, outcomes []outboxdriver.Completion) ([]bool, error) {
	return checked(c.s.Complete(ctx, c.decided(outcomes)))
}

func (c checkedStore) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	p.Outcomes = c.decided(p.Outcomes)
	done, jobs, err := c.s.CompleteClaim(ctx, p)
	jobs, err = openJobs(c.box, jobs, storeErr(err))
	return done, jobs, err
}

func (c checkedStore) Reap(ctx context.Context, p outboxdriver.ReapParams) (int, error) {
	p.Decide = c.openedDecision(p.Decide)
	return checked(c.s.Reap(ctx, p))
}

func (c checkedStore) UpdateDelivery(ctx context.Context, p outboxdriver.UpdateDeliveryParams) (Delivery, error) {
	p.Decide = c.openedDecision(p.Decide)
	return checked(c.s.UpdateDelivery(ctx, p))
}

// openedDecision is decide run on the endpoint with its keys opened (sealedChange).
func (c checkedStore) openedDecision(decide outboxdriver.DecideFunc) outboxdriver.DecideFunc {
	if decide == nil {
		return nil
	}
	return func(d Delivery, ep Endpoint) (outboxdriver.Change, error) {
		return sealedChange(c.box, ep, func(ep Endpoint) (outboxdriver.Change, error) { return decide(d, ep) })
	}
}

func (c checkedStore) Recover(ctx context.Context, p outboxdriver.RecoverParams) (int, error) {
	return checked(c.s.Recover(ctx, p))
}

func (c checkedStore) GetDelivery(ctx context.Context, p outboxdriver.GetDeliveryParams) (Delivery, []Attempt, error) {
	return checked2(c.s.GetDelivery(ctx, p))
}

func (c checkedStore) ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error) {
	return checked(c.s.ListDeliveries(ctx, q))
}

func (c checkedStore) ListAudit(ctx context.Context, p outboxdriver.ListAuditParams) ([]AuditEntry, error) {
	return checked(c.s.ListAudit(ctx, p))
}

func (c checkedStore) Purge(ctx context.Context, p outboxdriver.PurgeParams) (int, int, error) {
	return checked2(c.s.Purge(ctx, p))
}

func (c checkedStore) CreateEventType(ctx context.Context, t outboxdriver.EventType) error {
	return storeErr(c.s.CreateEventType(ctx, t))
}

func (c checkedStore) GetEventType(ctx context.Context, p outboxdriver.GetEventTypeParams) (EventType, error) {
	return checked(c.s.GetEventType(ctx, p))
}

func (c checkedStore) ListEventTypes(ctx context.Context, p outboxdriver.ListEventTypesParams) ([]EventType, error) {
	return checked(c.s.ListEventTypes(ctx, p))
}

func (c checkedStore) UpdateEventType(ctx context.Context, p outboxdriver.UpdateEventTypeParams) (EventType, error) {
	return checked(c.s.UpdateEventType(ctx, p))
}

func (c checkedStore) GetCatalog(ctx context.Context, account string) (Catalog, error) {
	return checked(c.s.GetCatalog(ctx, account))
}

func (c checkedStore) SetCatalog(ctx context.Context, cat Catalog) error {
	return storeErr(c.s.SetCatalog(ctx, cat))
}
