package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Row locks on endpoints (docs/outbox.md §5). An endpoint's row is what serializes
// the writes that depend on it:
//   - claims, completions, the reaper and publish leases take FOR NO KEY UPDATE: they
//     change its health or its in-flight count, one after another; claims and
//     publish leases SKIP LOCKED, so they never wait;
//   - changes of its status or removal (UpdateEndpoint, and a completion whose
//     decision moves the waiting deliveries) take FOR UPDATE;
//   - publishes take FOR KEY SHARE, which only FOR UPDATE conflicts with: a publish
//     never waits for claims and completions, and a pause, disable or removal waits for
//     the publishes that read the endpoint as it was, so that moving the waiting
//     deliveries sees theirs.
//
// Every transaction that waits locks endpoints before deliveries, and several
// endpoints in id order, so that two of them never wait for each other.

// CreateEndpoint implements outboxdriver.Store.
func (s *Store) CreateEndpoint(ctx context.Context, p outboxdriver.CreateEndpointParams) error {
	ep := p.Endpoint
	j, err := encodeEndpoint(ep)
	if err != nil {
		return err
	}
	return s.write(ctx, func(q querier) error {
		n, err := q.exec(ctx, s.q(`INSERT INTO outbox_endpoints (`+endpointColumns+`)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24)
			ON CONFLICT (id) DO NOTHING`),
			ep.ID, ep.Account, ep.URL, j.events, ep.APIVersion, j.secrets, ep.Profile, j.overrides, ep.Managed,
			string(ep.Status), ep.Failures, ep.FailingSince, ep.LastDeliveryAt, ep.PausedAt, ep.PauseReason,
			ep.DisabledAt, ep.HoldUntil, ep.RemovedAt, ep.CreatedAt, ep.InFlightCap, j.headers, j.channels, j.filter, ep.RateLimit)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: endpoint %s exists", outboxdriver.ErrConflict, ep.ID)
		}
		return s.insertAudit(ctx, q, []outboxdriver.AuditEntry{p.Audit})
	})
}

// GetEndpoint implements outboxdriver.Store.
func (s *Store) GetEndpoint(ctx context.Context, p outboxdriver.GetEndpointParams) (outboxdriver.Endpoint, error) {
	return s.accountEndpoint(ctx, s.read(), p.Account, p.ID, "")
}

// accountEndpoint reads the endpoint id of account, with lock appended as getEndpoint
// does: another account's, or a removed one, is ErrNotFound.
func (s *Store) accountEndpoint(ctx context.Context, q querier, account, id, lock string) (outboxdriver.Endpoint, error) {
	ep, err := s.getEndpoint(ctx, q, id, lock)
	if err != nil {
		return outboxdriver.Endpoint{}, err
	}
	if ep.Account != account || ep.RemovedAt != nil {
		return outboxdriver.Endpoint{}, notFound("endpoint", id)
	}
	return ep, nil
}

// getEndpoint reads an endpoint by id whatever its account, removed ones included,
// with lock ("", "FOR UPDATE", ...) appended.
func (s *Store) getEndpoint(ctx context.Context, q querier, id, lock string) (outboxdriver.Endpoint, error) {
	return one(q.queryRow(ctx, s.q(`SELECT `+endpointColumns+` FROM outbox_endpoints WHERE id = $1 `+lock), id), scanEndpoint, "endpoint", id)
}

// ListEndpoints implements outboxdriver.Store.
func (s *Store) ListEndpoints(ctx context.Context, account string) ([]outboxdriver.Endpoint, error) {
	rs, err := s.read().query(ctx, s.q(`SELECT `+endpointColumns+` FROM outbox_endpoints
		WHERE account = $1 AND removed_at IS NULL ORDER BY created_at, id`), account)
	return scanEndpoints(rs, err)
}

// UpdateEndpoint implements outboxdriver.Store.
func (s *Store) UpdateEndpoint(ctx context.Context, p outboxdriver.UpdateEndpointParams) (outboxdriver.Endpoint, error) {
	var result outboxdriver.Endpoint
	err := s.write(ctx, func(q querier) error {
		ep, err := s.accountEndpoint(ctx, q, p.Account, p.ID, "FOR UPDATE")
		if err != nil {
			return err
		}
		ch, err := p.Change(ep)
		if err != nil {
			return err
		}
		if ch.Endpoint != nil {
			if err := s.updateEndpoints(ctx, q, []endpointUpdate{{ep: *ch.Endpoint, id: ep.ID}}); err != nil {
				return err
			}
		}
		if ch.Waiting != "" {
			if err := s.moveWaiting(ctx, q, ch, ep.ID, ""); err != nil {
				return err
			}
		}
		if err := s.insertAudit(ctx, q, ch.Audit); err != nil {
			return err
		}
		result, err = s.getEndpoint(ctx, q, p.ID, "")
		return err
	})
	if err != nil {
		return outboxdriver.Endpoint{}, err
	}
	return result, nil
}

// endpointUpdate is the new state of endpoint id (ep's mutable fields) and how many
// of its leases the same write released.
type endpointUpdate struct {
	id       string
	ep       outboxdriver.Endpoint
	released int
}

// updateEndpoints writes every endpoint's mutable fields, and takes the leases each
// released off its in-flight count, in one statement.
func (s *Store) updateEndpoints(ctx context.Context, q querier, ups []endpointUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	n := len(ups)
	var (
		ids, urls, events, versions, secrets, profiles, overrides, statuses, reasons = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		headers, channels, filters                     = make([]string, n), make([]string, n), make([]string, n)
		managed                                        = make([]bool, n)
		failures, caps, released, rates                = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
		failing, last, paused, disabled, hold, removed = timeCols(n), timeCols(n), timeCols(n), timeCols(n), timeCols(n), timeCols(n)
	)
	for i, u := range ups {
		ep := u.ep
		j, err := encodeEndpoint(ep)
		if err != nil {
			return err
		}
		ids[i], urls[i], events[i], versions[i], secrets[i], profiles[i], overrides[i] = u.id, ep.URL, j.events, ep.APIVersion, j.secrets, ep.Profile, j.overrides
		statuses[i], reasons[i], managed[i] = string(ep.Status), ep.PauseReason, ep.Managed
		failures[i], caps[i], released[i] = int32(ep.Failures), int32(ep.InFlightCap), int32(u.released)
		headers[i], channels[i], filters[i], rates[i] = j.headers, j.channels, j.filter, int32(ep.RateLimit)
		failing[i], last[i], paused[i], disabled[i], hold[i], removed[i] = ep.FailingSince, ep.LastDeliveryAt, ep.PausedAt, ep.DisabledAt, ep.HoldUntil, ep.RemovedAt
	}
	_, err := q.exec(ctx, s.q(`UPDATE outbox_endpoints e SET url = v.url, events = v.events::jsonb,
		api_version = v.api_version, secrets = v.secrets::jsonb, profile = v.profile, overrides = v.overrides::jsonb,
		managed = v.managed, status = v.status, failures = v.failures, failing_since = v.failing_since,
		last_delivery_at = v.last_delivery_at, paused_at = v.paused_at, pause_reason = v.pause_reason,
		disabled_at = v.disabled_at, hold_until = v.hold_until, removed_at = v.removed_at,
		in_flight_cap = v.in_flight_cap, in_flight = e.in_flight - v.released,
		headers = v.headers, channels = v.channels, filter = v.filter, rate_limit = v.rate_limit
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[],
			$9::text[], $10::int[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::text[],
			$15::timestamptz[], $16::timestamptz[], $17::timestamptz[], $18::int[], $19::int[],
			$20::text[], $21::text[], $22::text[], $23::int[])
			AS v(id, url, events, api_version, secrets, profile, overrides, managed, status, failures, failing_since,
			last_delivery_at, paused_at, pause_reason, disabled_at, hold_until, removed_at, in_flight_cap, released,
			headers, channels, filter, rate_limit)
		WHERE e.id = v.id`),
		ids, urls, events, versions, secrets, profiles, overrides, managed, statuses, failures, failing, last, paused,
		reasons, disabled, hold, removed, caps, released, headers, channels, filters, rates)
	if err != nil {
		return fmt.Errorf("pgstore: update endpoints: %w", err)
	}
	return nil
}

func timeCols(n int) []*time.Time { return make([]*time.Time, n) }

// moveWaitingSQL gives an endpoint's waiting deliveries (pending, not leased) the
// status a pause, a disable or a removal sets, except the delivery whose attempt
// caused it. It walks the endpoint's PENDING index.
const moveWaitingSQL = `UPDATE outbox_deliveries SET status = $1, last_error = $2, updated_at = $3
WHERE endpoint_id = $4 AND status = 'PENDING' AND lease_until IS NULL AND id <> $5`

// moveWaiting applies ch.Waiting to the endpoint's waiting deliveries but
// exceptDelivery. The caller holds the endpoint's row FOR UPDATE: the publishes that
// read it before have committed their deliveries, and those after see its new status.
func (s *Store) moveWaiting(ctx context.Context, q querier, ch outboxdriver.Change, endpointID, exceptDelivery string) error {
	if _, err := q.exec(ctx, s.q(moveWaitingSQL), string(ch.Waiting), ch.WaitingReason, ch.At, endpointID, exceptDelivery); err != nil {
		return fmt.Errorf("pgstore: update waiting deliveries: %w", err)
	}
	return nil
}

// insertAudit appends entries in order, in one statement.
func (s *Store) insertAudit(ctx context.Context, q querier, entries []outboxdriver.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	n := len(entries)
	accounts, endpoints, deliveries, actions := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	actors, reasons, counts, ats := make([]string, n), make([]string, n), make([]int32, n), make([]time.Time, n)
	for i, a := range entries {
		accounts[i], endpoints[i], deliveries[i], actions[i] = a.Account, a.EndpointID, a.DeliveryID, a.Action
		actors[i], reasons[i], counts[i], ats[i] = a.Actor, a.Reason, int32(a.Count), a.At
		if actors[i] == "" {
			actors[i] = outboxdriver.ActorSystem
		}
	}
	_, err := q.exec(ctx, s.q(`INSERT INTO outbox_audit (account, endpoint_id, delivery_id, action, actor, reason, count, at)
		SELECT account, endpoint_id, delivery_id, action, actor, reason, count, at
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::timestamptz[]) WITH ORDINALITY
			AS v(account, endpoint_id, delivery_id, action, actor, reason, count, at, n)
		ORDER BY n`), accounts, endpoints, deliveries, actions, actors, reasons, counts, ats)
	if err != nil {
		return fmt.Errorf("pgstore: insert audit: %w", err)
	}
	return nil
}

// ListAudit implements outboxdriver.Store.
func (s *Store) ListAudit(ctx context.Context, p outboxdriver.ListAuditParams) ([]outboxdriver.AuditEntry, error) {
	query := `SELECT id, account, endpoint_id, delivery_id, action, actor, reason, count, at FROM outbox_audit WHERE account = $1`
	args := []any{p.Account}
	if p.EndpointID != "" {
		args = append(args, p.EndpointID)
		query += fmt.Sprintf(` AND endpoint_id = $%d`, len(args))
	}
	if p.BeforeID > 0 {
		args = append(args, p.BeforeID)
		query += fmt.Sprintf(` AND id < $%d`, len(args))
	}
	args = append(args, p.Limit)
	query += fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args))
	rs, err := s.read().query(ctx, s.q(query), args...)
	return sqlrows.Collect(nil, rs, err, func(r sqlrows.Row) (outboxdriver.AuditEntry, error) {
		var a outboxdriver.AuditEntry
		err := r.Scan(&a.ID, &a.Account, &a.EndpointID, &a.DeliveryID, &a.Action, &a.Actor, &a.Reason, &a.Count, &a.At)
		a.At = utc(a.At)
		return a, err
	})
}
