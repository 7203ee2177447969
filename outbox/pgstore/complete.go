package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/deliverybatch"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// batch decides and applies the changes of many deliveries in one transaction with
// few statements: it locks their endpoints (in id order) and then the deliveries,
// reads each once, and writes the delivery updates, attempts and endpoint updates as
// one statement each.
//
// Every decision sees the state a statement-by-statement application would have
// shown it: a delivery or endpoint changed earlier in the batch is served from the
// batch, normalized as a re-read returns it, and a Waiting change, which rewrites rows
// in bulk, first writes the batch and forgets the deliveries it may have touched.
type batch struct {
	deliverybatch.Batch
	s         *Store
	q         querier
	endpoints map[string]*cachedEndpoint
	dirty     []string // endpoints changed since the last flush, in order
}

type cachedEndpoint struct {
	ep outboxdriver.Endpoint
	// dirty: ep differs from the row, or released does.
	dirty    bool
	released int
	// strong: this transaction holds the row FOR UPDATE.
	strong bool
}

func (s *Store) newBatch(q querier) *batch {
	return &batch{Batch: deliverybatch.New(), s: s, q: q, endpoints: map[string]*cachedEndpoint{}}
}

// lock locks the endpoints of deliveries ids, in id order, and then the deliveries,
// and reads them. With skipLocked, deliveries another transaction holds are left out,
// and so are those that no longer match cond (a condition on the delivery row d, such
// as an expired lease, checked on its latest version once locked).
func (b *batch) lock(ctx context.Context, ids []string, cond string, args ...any) error {
	if len(ids) == 0 {
		return nil
	}
	if err := b.lockEndpoints(ctx, ids); err != nil {
		return err
	}
	query := `SELECT ` + deliveryColumns + `, coalesce(lease_token, '') FROM outbox_deliveries d WHERE id = ANY($1)`
	lock := ` ORDER BY id FOR UPDATE`
	if cond != "" {
		query += ` AND ` + cond
		lock += ` SKIP LOCKED`
	}
	return b.load(ctx, query+lock, append([]any{ids}, args...)...)
}

// lockLeased locks what lock does for the deliveries of outcomes, and reads them:
// those whose row still carries the outcome's token and that come with the delivery
// the claim returned (outboxdriver.Completion.Delivery) take it, the others are read
// whole. The lock reads two columns a delivery instead of every column.
func (b *batch) lockLeased(ctx context.Context, outcomes []outboxdriver.Completion) error {
	ids := deliverybatch.IDs(outcomes)
	if len(ids) == 0 {
		return nil
	}
	if err := b.lockEndpoints(ctx, ids); err != nil {
		return err
	}
	type lease struct{ id, token string }
	rs, err := b.q.query(ctx, b.s.q(`SELECT id, coalesce(lease_token, '') FROM outbox_deliveries
		WHERE id = ANY($1) ORDER BY id FOR UPDATE`), ids)
	leases, err := sqlrows.Collect(nil, rs, err, func(r sqlrows.Row) (lease, error) {
		var l lease
		err := r.Scan(&l.id, &l.token)
		return l, err
	})
	if err != nil {
		return err
	}
	held := make(map[string]string, len(leases))
	for _, l := range leases {
		held[l.id] = l.token
	}
	var whole []string
	for _, o := range outcomes {
		token, ok := held[o.DeliveryID]
		switch {
		case !ok: // purged: left out
		case o.Delivery != nil && o.Delivery.ID == o.DeliveryID && token != "" && token == o.Token:
			if _, done := b.Deliveries[o.DeliveryID]; !done {
				b.Deliveries[o.DeliveryID] = &deliverybatch.Cached{D: normalizedDelivery(*o.Delivery), Token: token}
			}
		default:
			whole = append(whole, o.DeliveryID)
		}
	}
	if len(whole) == 0 {
		return nil
	}
	return b.load(ctx, `SELECT `+deliveryColumns+`, coalesce(lease_token, '') FROM outbox_deliveries WHERE id = ANY($1)`, whole)
}

// lockEndpoints locks the endpoints of deliveries ids, in id order, and reads them.
func (b *batch) lockEndpoints(ctx context.Context, ids []string) error {
	eps, err := scanEndpoints(b.q.query(ctx, b.s.q(`SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE id IN (SELECT endpoint_id FROM outbox_deliveries WHERE id = ANY($1))
		ORDER BY id FOR NO KEY UPDATE`), ids))
	if err != nil {
		return err
	}
	for _, ep := range eps {
		b.endpoints[ep.ID] = &cachedEndpoint{ep: ep}
	}
	return nil
}

// load reads deliveries with query (their columns and lease token).
func (b *batch) load(ctx context.Context, query string, args ...any) error {
	rs, err := b.q.query(ctx, b.s.q(query), args...)
	return deliverybatch.Read[deliveryScan](&b.Batch, rs, err)
}

// Load implements deliverybatch.Store.
func (b *batch) Load(ctx context.Context, id string) error {
	return b.load(ctx, `SELECT `+deliveryColumns+`, coalesce(lease_token, '') FROM outbox_deliveries WHERE id = $1 FOR UPDATE`, id)
}

// Endpoint implements deliverybatch.Store.
func (b *batch) Endpoint(ctx context.Context, id string) (*cachedEndpoint, outboxdriver.Endpoint, error) {
	if c, ok := b.endpoints[id]; ok {
		return c, c.ep, nil
	}
	ep, err := b.s.getEndpoint(ctx, b.q, id, "FOR NO KEY UPDATE")
	if err != nil {
		return nil, outboxdriver.Endpoint{}, err
	}
	c := &cachedEndpoint{ep: ep}
	b.endpoints[id] = c
	return c, ep, nil
}

// Change implements deliverybatch.Store: it buffers ch, a decision about delivery c
// of endpoint ce.
func (b *batch) Change(ctx context.Context, ch outboxdriver.Change, c *deliverybatch.Cached, ce *cachedEndpoint) error {
	if d := ch.Delivery; d != nil {
		nd := normalizedDelivery(*d)
		nd.ID = c.D.ID
		if c.D.LeaseUntil != nil {
			ce.released++ // the update clears the lease
			b.markDirty(ce)
		}
		b.Write(nd)
	}
	if a := ch.Attempt; a != nil {
		b.Attempts = append(b.Attempts, *a)
	}
	if ep := ch.Endpoint; ep != nil {
		nep, err := normalizedEndpoint(*ep)
		if err != nil {
			return err
		}
		nep.ID, nep.Account, nep.CreatedAt = ce.ep.ID, ce.ep.Account, ce.ep.CreatedAt
		ce.ep = nep
		b.markDirty(ce)
	}
	if ch.Waiting != "" {
		if err := b.Flush(ctx); err != nil {
			return err
		}
		if !ce.strong {
			// Wait for the publishes that read the endpoint as it was (FOR KEY SHARE):
			// their deliveries must be moved too.
			if _, err := b.q.exec(ctx, b.s.q(`SELECT 1 FROM outbox_endpoints WHERE id = $1 FOR UPDATE`), ce.ep.ID); err != nil {
				return err
			}
			ce.strong = true
		}
		if err := b.s.moveWaiting(ctx, b.q, ch, ce.ep.ID, c.D.ID); err != nil {
			return err
		}
		b.Forget(ce.ep.ID, c.D.ID)
	}
	return b.s.insertAudit(ctx, b.q, ch.Audit)
}

func (b *batch) markDirty(ce *cachedEndpoint) {
	if !ce.dirty {
		ce.dirty = true
		b.dirty = append(b.dirty, ce.ep.ID)
	}
}

// Flush implements deliverybatch.Store: it writes the buffered changes.
func (b *batch) Flush(ctx context.Context) error {
	if err := b.flushDeliveries(ctx); err != nil {
		return err
	}
	if err := b.s.insertAttempts(ctx, b.q, b.Attempts); err != nil {
		return err
	}
	b.Attempts = b.Attempts[:0]
	ups := make([]endpointUpdate, 0, len(b.dirty))
	for _, id := range b.dirty {
		ce := b.endpoints[id]
		ups = append(ups, endpointUpdate{id: id, ep: ce.ep, released: ce.released})
		ce.dirty, ce.released = false, 0
	}
	b.dirty = b.dirty[:0]
	return b.s.updateEndpoints(ctx, b.q, ups)
}

func (b *batch) flushDeliveries(ctx context.Context) error {
	if len(b.Updates) == 0 {
		return nil
	}
	n := len(b.Updates)
	ids, statuses, errs := make([]string, n), make([]string, n), make([]string, n)
	attempts, runs := make([]int32, n), make([]int32, n)
	next, updated := make([]time.Time, n), make([]time.Time, n)
	fault := timeCols(n)
	for i, d := range b.Updates {
		ids[i], statuses[i], errs[i], attempts[i], runs[i] = d.ID, string(d.Status), d.LastError, int32(d.Attempts), int32(d.RunStart)
		next[i], updated[i], fault[i] = d.NextAttemptAt, d.UpdatedAt, d.FaultSince
	}
	_, err := b.q.exec(ctx, b.s.q(`UPDATE outbox_deliveries d SET status = v.status, attempts = v.attempts,
		run_start = v.run_start, next_attempt_at = v.next_attempt_at, fault_since = v.fault_since,
		last_error = v.last_error, updated_at = v.updated_at, lease_until = NULL, lease_token = NULL
		FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::timestamptz[])
			AS v(id, status, attempts, run_start, next_attempt_at, fault_since, last_error, updated_at)
		WHERE d.id = v.id`), ids, statuses, attempts, runs, next, fault, errs, updated)
	b.Written()
	if err != nil {
		return fmt.Errorf("pgstore: update deliveries: %w", err)
	}
	return nil
}

// Complete implements outboxdriver.Store.
func (s *Store) Complete(ctx context.Context, outcomes []outboxdriver.Completion) ([]bool, error) {
	applied, _, err := s.CompleteClaim(ctx, outboxdriver.CompleteClaimParams{Outcomes: outcomes})
	return applied, err
}

// CompleteClaim implements outboxdriver.Store.
func (s *Store) CompleteClaim(ctx context.Context, p outboxdriver.CompleteClaimParams) ([]bool, []outboxdriver.Job, error) {
	applied := make([]bool, len(p.Outcomes))
	var jobs []outboxdriver.Job
	if len(p.Outcomes) == 0 && p.Next.Limit <= 0 {
		return applied, nil, nil
	}
	err := s.write(ctx, func(q querier) error {
		clear(applied)
		b := s.newBatch(q)
		if err := b.lockLeased(ctx, p.Outcomes); err != nil {
			return err
		}
		if err := deliverybatch.Complete(ctx, &b.Batch, b, p.Outcomes, applied); err != nil {
			return err
		}
		if p.Next.Limit <= 0 {
			return nil
		}
		var err error
		jobs, err = s.claimIn(ctx, q, p.Next)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return applied, jobs, nil
}

// Reap implements outboxdriver.Store. Reapers on every node may run at once: each
// locks the candidates' endpoints, then the deliveries SKIP LOCKED with their lease
// checked again on their latest version, so a lease another reaper settled (or a
// completion holds) is not taken twice.
func (s *Store) Reap(ctx context.Context, p outboxdriver.ReapParams) (int, error) {
	n := 0
	err := s.write(ctx, func(q querier) error {
		n = 0
		ids, err := scanStrings(q.query(ctx, s.q(`SELECT id FROM outbox_deliveries
			WHERE lease_until IS NOT NULL AND lease_until < coalesce($1::timestamptz, now()) AND status = 'PENDING'
			ORDER BY lease_until LIMIT $2`), s.now(p.Now), p.Limit))
		if err != nil {
			return err
		}
		b := s.newBatch(q)
		if err := b.lock(ctx, ids, `status = 'PENDING' AND lease_until < coalesce($2::timestamptz, now())`, s.now(p.Now)); err != nil {
			return err
		}
		locked := make([]string, 0, len(b.Deliveries))
		for _, id := range ids {
			if _, ok := b.Deliveries[id]; ok {
				locked = append(locked, id)
			}
		}
		n, err = deliverybatch.Reap(ctx, &b.Batch, b, locked, p.Decide)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
