package deliverybatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Cached is a delivery as the batch knows it, with its lease token ("": no lease).
type Cached struct {
	D     outboxdriver.Delivery
	Token string
}

// Batch is the deliveries read and the changes buffered by one store transaction.
type Batch struct {
	// Deliveries are the deliveries read, by id.
	Deliveries map[string]*Cached
	// Updates are the pending delivery updates (the last change of a delivery wins,
	// as it would have in sequence), and Attempts the pending attempt inserts, in
	// order.
	Updates     []outboxdriver.Delivery
	updateIndex map[string]int
	Attempts    []outboxdriver.Attempt
}

// New returns an empty Batch.
func New() Batch {
	return Batch{Deliveries: map[string]*Cached{}, updateIndex: map[string]int{}}
}

// Store is a store's side of a batch: how it reads and writes rows.
type Store[E any] interface {
	// Load reads the delivery id into Deliveries, when it exists.
	Load(ctx context.Context, id string) error
	// Flush writes what the batch buffered.
	Flush(ctx context.Context) error
	// Endpoint is the endpoint id as the batch knows it: e, the store's handle of it,
	// and ep.
	Endpoint(ctx context.Context, id string) (e E, ep outboxdriver.Endpoint, err error)
	// Change buffers ch, a decision about delivery c of endpoint e.
	Change(ctx context.Context, ch outboxdriver.Change, c *Cached, e E) error
}

// Delivery returns a delivery's current state, from the batch or read by s; a
// delivery whose update is buffered is read after s wrote the buffer. A missing one
// is an ErrNotFound error.
func Delivery[E any](ctx context.Context, b *Batch, s Store[E], id string) (*Cached, error) {
	if c, ok := b.Deliveries[id]; ok {
		return c, nil
	}
	if _, pending := b.updateIndex[id]; pending {
		// Changed by another decision of the batch: read what it wrote.
		if err := s.Flush(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.Load(ctx, id); err != nil {
		return nil, err
	}
	c, ok := b.Deliveries[id]
	if !ok {
		return nil, fmt.Errorf("%w: delivery %s", outboxdriver.ErrNotFound, id)
	}
	return c, nil
}

// Apply decides one delivery and has s buffer its Change. With a token, a delivery
// whose lease token differs, or that holds no lease, is left alone (false). A missing
// delivery or endpoint is an ErrNotFound error.
func Apply[E any](ctx context.Context, b *Batch, s Store[E], id string, token *string, decide outboxdriver.DecideFunc) (bool, error) {
	c, err := Delivery(ctx, b, s, id)
	if err != nil {
		return false, err
	}
	if token != nil && (c.Token == "" || c.Token != *token) { // "": no lease to match
		return false, nil
	}
	e, ep, err := s.Endpoint(ctx, c.D.EndpointID)
	if err != nil {
		return false, err
	}
	ch, err := decide(c.D, ep)
	if err != nil {
		return false, err
	}
	return true, s.Change(ctx, ch, c, e)
}

// Write buffers the update of delivery nd.ID to nd (as a read after writing it
// returns it), and makes the batch's copy of the delivery what the update leaves:
// the columns it does not set kept, the lease cleared.
func (b *Batch) Write(nd outboxdriver.Delivery) {
	if i, ok := b.updateIndex[nd.ID]; ok {
		b.Updates[i] = nd
	} else {
		b.updateIndex[nd.ID] = len(b.Updates)
		b.Updates = append(b.Updates, nd)
	}
	if c, ok := b.Deliveries[nd.ID]; ok {
		kept := c.D
		kept.Status, kept.Attempts, kept.RunStart = nd.Status, nd.Attempts, nd.RunStart
		kept.NextAttemptAt, kept.FaultSince, kept.LastError = nd.NextAttemptAt, nd.FaultSince, nd.LastError
		kept.UpdatedAt, kept.LeaseUntil = nd.UpdatedAt, nil
		c.D, c.Token = kept, ""
	}
}

// Written forgets the buffered delivery updates, once the store wrote them.
func (b *Batch) Written() {
	b.Updates = b.Updates[:0]
	clear(b.updateIndex)
}

// Forget drops the deliveries of endpointID but keep, which a bulk change of the
// endpoint's deliveries (a Waiting change) may have rewritten: they are read again
// if needed.
func (b *Batch) Forget(endpointID, keep string) {
	for id, c := range b.Deliveries {
		if c.D.EndpointID == endpointID && id != keep {
			delete(b.Deliveries, id)
		}
	}
}

// IDs are the deliveries outcomes complete, in order.
func IDs(outcomes []outboxdriver.Completion) []string {
	ids := make([]string, len(outcomes))
	for i, c := range outcomes {
		ids[i] = c.DeliveryID
	}
	return ids
}

// Complete applies outcomes in order, each only to the lease its token names, and has
// s write what they buffered. applied[i] is whether outcome i applied: false for a
// delivery purged, or reaped and perhaps claimed again.
func Complete[E any](ctx context.Context, b *Batch, s Store[E], outcomes []outboxdriver.Completion, applied []bool) error {
	for i, c := range outcomes {
		ok, err := Apply(ctx, b, s, c.DeliveryID, &c.Token, c.Decide)
		if err != nil && !errors.Is(err, outboxdriver.ErrNotFound) {
			return err
		}
		applied[i] = ok
	}
	return s.Flush(ctx)
}

// Reap applies decide to each of the deliveries ids, whatever their lease token, and
// has s write what that buffered. It returns how many it decided.
func Reap[E any](ctx context.Context, b *Batch, s Store[E], ids []string, decide outboxdriver.DecideFunc) (int, error) {
	for _, id := range ids {
		if _, err := Apply(ctx, b, s, id, nil, decide); err != nil {
			return 0, err
		}
	}
	return len(ids), s.Flush(ctx)
}

// Read adds to the batch the deliveries of a query's result (rows and err as the
// query returned them), each row a delivery's columns, read through the store's scan
// buffer S, and then its lease token ("" for none).
func Read[S any, B interface {
	*S
	sqlrows.Buffer[outboxdriver.Delivery]
}](b *Batch, rows sqlrows.Rows, err error) error {
	read, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (*Cached, error) {
		var (
			buf   S
			token string
		)
		if err := r.Scan(append(B(&buf).Dest(), &token)...); err != nil {
			return nil, err
		}
		d, err := B(&buf).Value()
		return &Cached{D: d, Token: token}, err
	})
	for _, c := range read {
		b.Deliveries[c.D.ID] = c
	}
	return err
}
