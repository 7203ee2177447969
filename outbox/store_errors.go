package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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

// checkedStore is the Store the Outbox works through: the same store, its errors
// passed through storeErr.
type checkedStore struct{ s Store }

var _ Store = checkedStore{}

func (c checkedStore) CreateEndpoint(ctx context.Context, ep Endpoint, audit AuditEntry) error {
	return storeErr(c.s.CreateEndpoint(ctx, ep, audit))
}

func (c checkedStore) GetEndpoint(ctx context.Context, account, id string) (Endpoint, error) {
	ep, err := c.s.GetEndpoint(ctx, account, id)
	return ep, storeErr(err)
}

func (c checkedStore) ListEndpoints(ctx context.Context, account string) ([]Endpoint, error) {
	eps, err := c.s.ListEndpoints(ctx, account)
	return eps, storeErr(err)
}

func (c checkedStore) UpdateEndpoint(ctx context.Context, account, id string, change func(Endpoint) (Change, error)) (Endpoint, error) {
	ep, err := c.s.UpdateEndpoint(ctx, account, id, change)
	return ep, storeErr(err)
}

func (c checkedStore) Publish(ctx context.Context, tx *sql.Tx, ev Event, now time.Time, plan PlanFunc) (Published, error) {
	pub, err := c.s.Publish(ctx, tx, ev, now, plan)
	return pub, storeErr(err)
}

func (c checkedStore) GetEvent(ctx context.Context, account, id string) (Event, error) {
	ev, err := c.s.GetEvent(ctx, account, id)
	return ev, storeErr(err)
}

func (c checkedStore) ListEvents(ctx context.Context, q EventQuery) ([]Event, error) {
	evs, err := c.s.ListEvents(ctx, q)
	return evs, storeErr(err)
}

func (c checkedStore) Claim(ctx context.Context, p ClaimParams) ([]Job, error) {
	jobs, err := c.s.Claim(ctx, p)
	return jobs, storeErr(err)
}

func (c checkedStore) NextDue(ctx context.Context) (time.Time, bool, error) {
	at, ok, err := c.s.NextDue(ctx)
	return at, ok, storeErr(err)
}

func (c checkedStore) Complete(ctx context.Context, outcomes []Completion) ([]bool, error) {
	applied, err := c.s.Complete(ctx, outcomes)
	return applied, storeErr(err)
}

func (c checkedStore) CompleteClaim(ctx context.Context, outcomes []Completion, next ClaimParams) ([]bool, []Job, error) {
	applied, jobs, err := c.s.CompleteClaim(ctx, outcomes, next)
	return applied, jobs, storeErr(err)
}

func (c checkedStore) Reap(ctx context.Context, now time.Time, limit int, decide DecideFunc) (int, error) {
	n, err := c.s.Reap(ctx, now, limit, decide)
	return n, storeErr(err)
}

func (c checkedStore) UpdateDelivery(ctx context.Context, account, id string, change DecideFunc) (Delivery, error) {
	d, err := c.s.UpdateDelivery(ctx, account, id, change)
	return d, storeErr(err)
}

func (c checkedStore) Recover(ctx context.Context, account, endpointID string, since, now time.Time) (int, error) {
	n, err := c.s.Recover(ctx, account, endpointID, since, now)
	return n, storeErr(err)
}

func (c checkedStore) GetDelivery(ctx context.Context, account, id string) (Delivery, []Attempt, error) {
	d, as, err := c.s.GetDelivery(ctx, account, id)
	return d, as, storeErr(err)
}

func (c checkedStore) ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error) {
	ds, err := c.s.ListDeliveries(ctx, q)
	return ds, storeErr(err)
}

func (c checkedStore) ListAudit(ctx context.Context, account string, limit int) ([]AuditEntry, error) {
	es, err := c.s.ListAudit(ctx, account, limit)
	return es, storeErr(err)
}

func (c checkedStore) Purge(ctx context.Context, before time.Time, limit int) (int, int, error) {
	d, e, err := c.s.Purge(ctx, before, limit)
	return d, e, storeErr(err)
}
