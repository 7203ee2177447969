package sqlitestore

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// pubReq is one Publish waiting in a group commit.
type pubReq struct {
	p   outboxdriver.PublishParams
	out outboxdriver.Published
}

// publishTogether writes the publishes of a group with multi-row statements: the new
// events in one INSERT, each account's endpoints read once, the deliveries (with the
// plan's attempt, if any, in their rows) in one INSERT. It marks in done the requests it wrote. A publish whose
// event id exists (a duplicate, a conflict, or a repeat within the group) is left to
// its own fn, which runs after these and so sees them; so is every publish when a
// statement fails, the savepoint undoing what the batch wrote. Concurrent writes have
// no order, so writing the group's publishes first is one of the orders they could
// have had. It reports whether the transaction was lost: a failed statement's
// savepoint that cannot be rolled back (SQLite rolled the whole transaction back, as
// it may on a full disk: runTx).
func (s *Store) publishTogether(q querier, batch []*writeReq, done []bool) (lost bool) {
	var idx []int
	for i, r := range batch {
		if r.pub != nil {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return false
	}
	ctx := context.Background() // shared by every caller: none may cancel the others
	if _, err := q.ExecContext(ctx, `SAVEPOINT pub`); err != nil {
		return false
	}
	reqs := make([]*pubReq, len(idx))
	for k, i := range idx {
		reqs[k] = batch[i].pub
	}
	undo := func() bool {
		if _, err := q.ExecContext(ctx, `ROLLBACK TO pub`); err != nil {
			return true
		}
		_, err := q.ExecContext(ctx, `RELEASE pub`)
		return err != nil
	}
	wrote, err := publishBatch(ctx, q, reqs)
	if err != nil {
		return undo()
	}
	if _, err := q.ExecContext(ctx, `RELEASE pub`); err != nil {
		return undo()
	}
	for k, i := range idx {
		done[i] = wrote[k]
	}
	return false
}

// publishBatch inserts the events of reqs that are new and their deliveries, and
// reports which requests it completed.
func publishBatch(ctx context.Context, q querier, reqs []*pubReq) ([]bool, error) {
	inserted := map[string]bool{}
	err := chunks(len(reqs), func(i, j int) error {
		args := make([]any, 0, (j-i)*8)
		for _, r := range reqs[i:j] {
			ev := r.p.Event
			channels, _, err := outboxdriver.EncodeEventRouting(ev)
			if err != nil {
				return err
			}
			args = append(args, ev.ID, ev.Account, ev.Type, micros(ev.CreatedAt), micros(r.p.Now), []byte(ev.Data), channels, ev.TraceParent)
		}
		rows, err := q.QueryContext(ctx, `INSERT INTO outbox_events (id, account, type, created_at, stored_at, data, channels, trace_parent)
			VALUES `+rowsSQL(j-i, 8)+` ON CONFLICT (account, id) DO NOTHING RETURNING account, id`, args...)
		if err != nil {
			return fmt.Errorf("sqlitestore: insert events: %w", err)
		}
		keys, err := sqlrows.Collect(nil, rows, nil, func(r sqlrows.Row) (string, error) {
			var account, id string
			err := r.Scan(&account, &id)
			return eventKey(account, id), err
		})
		for _, k := range keys {
			inserted[k] = true
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	wrote := make([]bool, len(reqs))
	endpoints := map[string][]outboxdriver.Endpoint{}
	var leases *publishLeases
	var (
		deliveries []outboxdriver.Delivery
		attempts   []*outboxdriver.Attempt // of deliveries, by index: the plan's (attempt 0) or nil
	)
	for k, r := range reqs {
		// The first request with a new id inserted it; a repeat goes its own way.
		ev := r.p.Event
		key := eventKey(ev.Account, ev.ID)
		if !inserted[key] {
			continue
		}
		delete(inserted, key)
		wrote[k] = true
		eps, ok := endpoints[ev.Account]
		if !ok {
			rows, err := q.QueryContext(ctx, `SELECT `+endpointColumns+` FROM outbox_endpoints
				WHERE account = ? AND removed_at IS NULL ORDER BY created_at, id`, ev.Account)
			if eps, err = sqlrows.Collect(nil, rows, err, scanEndpoint); err != nil {
				return nil, err
			}
			endpoints[ev.Account] = eps
		}
		r.out = outboxdriver.Published{Event: ev}
		if leases == nil {
			leases = newPublishLeases(q, r.p.Now)
		}
		leases.now = r.p.Now
		for _, ep := range eps {
			d, a, ok := r.p.Plan(ep)
			if !ok {
				if why := r.p.Excluded(ep); why != "" {
					r.out.Event.Excluded = append(r.out.Event.Excluded, outboxdriver.Exclusion{EndpointID: ep.ID, Reason: why})
				}
				continue
			}
			if err := leases.grant(ctx, ep, &d); err != nil {
				return nil, err
			}
			deliveries = append(deliveries, d)
			attempts = append(attempts, a)
			r.out.Deliveries = append(r.out.Deliveries, d)
		}
		if err := recordExcluded(ctx, q, r.out.Event); err != nil {
			return nil, err
		}
	}
	err = chunks(len(deliveries), func(i, j int) error {
		withAttempts := slices.ContainsFunc(attempts[i:j], func(a *outboxdriver.Attempt) bool { return a != nil })
		args := make([]any, 0, (j-i)*(insertDeliveryArgs+latestAttemptArgCount))
		for k, d := range deliveries[i:j] {
			args = append(args, deliveryArgs(d, attempts[i+k], withAttempts)...)
		}
		if _, err := q.ExecContext(ctx, insertDeliverySQL(j-i, withAttempts), args...); err != nil {
			return fmt.Errorf("sqlitestore: insert deliveries: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return wrote, nil
}
