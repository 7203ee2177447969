package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/internal/deliverybatch"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// batchApplier decides and applies the changes of many deliveries in one transaction
// with few statements: it reads the deliveries in one query and each endpoint once,
// and buffers delivery updates, attempt inserts and endpoint updates to write them as
// multi-row statements. The single writer runs SQLite's statements serially, so the
// statement count per delivery bounds the delivery rate.
//
// Every decision sees the state a statement-by-statement application would have
// shown it: a delivery or endpoint changed earlier in the batch is served from the
// buffer, normalized as a re-read would return it (times in microseconds, JSON columns
// decoded again), and a Waiting change, which rewrites rows in bulk, first writes the
// buffer and forgets the deliveries it may have touched.
type batchApplier struct {
	deliverybatch.Batch
	tx        querier
	endpoints map[string]*cachedEndpoint
	dirty     []string // endpoints changed since the last flush, in order
	// latest says, per delivery read, whether its row holds its latest attempt
	// (migration 0007), which a newer attempt moves to outbox_attempts.
	latest map[string]bool
}

type cachedEndpoint struct {
	ep    outboxdriver.Endpoint
	dirty bool
}

func newBatchApplier(tx querier) *batchApplier {
	return &batchApplier{Batch: deliverybatch.New(), tx: tx, endpoints: map[string]*cachedEndpoint{}, latest: map[string]bool{}}
}

// load reads the deliveries ids in one query; ids not found are left out (purged).
func (b *batchApplier) load(ctx context.Context, ids []string) error {
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := b.tx.QueryContext(ctx, `SELECT `+deliveryColumns+`, coalesce(lease_token, ''), attempt_number IS NOT NULL
		FROM outbox_deliveries WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	type loaded struct {
		c      *deliverybatch.Cached
		latest bool
	}
	read, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (loaded, error) {
		var (
			sc deliveryScan
			l  loaded
		)
		l.c = &deliverybatch.Cached{}
		err := r.Scan(append(sc.Dest(), &l.c.Token, &l.latest)...)
		l.c.D = sc.delivery()
		return l, err
	})
	for _, l := range read {
		b.Deliveries[l.c.D.ID] = l.c
		b.latest[l.c.D.ID] = l.latest
	}
	return err
}

// loadLeased reads the deliveries of outcomes: those whose row still carries the
// outcome's token and that come with the delivery the claim returned
// (outboxdriver.Completion.Delivery) take it, the others are read whole. The token
// check reads three columns a delivery instead of every column.
func (b *batchApplier) loadLeased(ctx context.Context, outcomes []outboxdriver.Completion) error {
	list, err := json.Marshal(deliverybatch.IDs(outcomes))
	if err != nil {
		return err
	}
	type lease struct {
		id, token string
		latest    bool
	}
	rows, err := b.tx.QueryContext(ctx, `SELECT id, coalesce(lease_token, ''), attempt_number IS NOT NULL
		FROM outbox_deliveries WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	leases, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (lease, error) {
		var l lease
		err := r.Scan(&l.id, &l.token, &l.latest)
		return l, err
	})
	if err != nil {
		return err
	}
	held := make(map[string]lease, len(leases))
	for _, l := range leases {
		held[l.id] = l
	}
	var whole []string
	for _, o := range outcomes {
		l, ok := held[o.DeliveryID]
		switch {
		case !ok: // purged: left out
		case o.Delivery != nil && o.Delivery.ID == l.id && l.token != "" && l.token == o.Token:
			if _, done := b.Deliveries[l.id]; !done {
				b.Deliveries[l.id] = &deliverybatch.Cached{D: normalizedLeased(*o.Delivery), Token: l.token}
				b.latest[l.id] = l.latest
			}
		default:
			whole = append(whole, o.DeliveryID)
		}
	}
	if len(whole) == 0 {
		return nil
	}
	return b.load(ctx, whole)
}

// normalizedLeased is a leased delivery as reading its row returns it: times in UTC
// microseconds.
func normalizedLeased(d outboxdriver.Delivery) outboxdriver.Delivery {
	d = normalizedDelivery(d)
	d.CreatedAt = fromMicros(micros(d.CreatedAt))
	if d.LeaseUntil != nil {
		t := fromMicros(micros(*d.LeaseUntil))
		d.LeaseUntil = &t
	}
	return d
}

// Load implements deliverybatch.Store.
func (b *batchApplier) Load(ctx context.Context, id string) error { return b.load(ctx, []string{id}) }

// Endpoint implements deliverybatch.Store.
func (b *batchApplier) Endpoint(ctx context.Context, id string) (outboxdriver.Endpoint, outboxdriver.Endpoint, error) {
	if c, ok := b.endpoints[id]; ok {
		return c.ep, c.ep, nil
	}
	ep, err := getEndpoint(ctx, b.tx, id)
	if err != nil {
		return outboxdriver.Endpoint{}, outboxdriver.Endpoint{}, err
	}
	b.endpoints[id] = &cachedEndpoint{ep: ep}
	return ep, ep, nil
}

// Change implements deliverybatch.Store.
func (b *batchApplier) Change(ctx context.Context, ch outboxdriver.Change, c *deliverybatch.Cached, ep outboxdriver.Endpoint) error {
	return b.change(ctx, ch, c.D.ID, ep.ID)
}

// change buffers ch, which is about delivery deliveryID of endpoint endpointID, in the
// order applyChange writes it.
func (b *batchApplier) change(ctx context.Context, ch outboxdriver.Change, deliveryID, endpointID string) error {
	if d := ch.Delivery; d != nil {
		nd := normalizedDelivery(*d)
		b.Write(nd)
		deliveryID = nd.ID
	}
	if a := ch.Attempt; a != nil {
		b.Attempts = append(b.Attempts, *a)
	}
	if ep := ch.Endpoint; ep != nil {
		c, ok := b.endpoints[ep.ID]
		var nep outboxdriver.Endpoint
		if ok && sameEncodedFields(c.ep, *ep) {
			// A health change (every attempt makes one): the JSON columns are those
			// already normalized, so only the times need it.
			nep = normalizedTimes(*ep)
			nep.Events, nep.Secrets, nep.Overrides = c.ep.Events, c.ep.Secrets, c.ep.Overrides
			nep.Headers, nep.Channels, nep.Filter = c.ep.Headers, c.ep.Channels, c.ep.Filter
		} else {
			var err error
			if nep, err = normalizedEndpoint(*ep); err != nil {
				return err
			}
		}
		if !ok {
			// Never read in this batch: keep the columns the update does not set.
			cur, err := getEndpoint(ctx, b.tx, ep.ID)
			if errors.Is(err, outboxdriver.ErrNotFound) {
				c = &cachedEndpoint{ep: nep} // the update matches no row, as in sequence
			} else if err != nil {
				return err
			} else {
				c = &cachedEndpoint{ep: cur}
			}
			b.endpoints[ep.ID] = c
		}
		id, account, created := c.ep.ID, c.ep.Account, c.ep.CreatedAt
		c.ep = nep
		c.ep.ID, c.ep.Account, c.ep.CreatedAt = id, account, created
		if !c.dirty {
			c.dirty = true
			b.dirty = append(b.dirty, ep.ID)
		}
	}
	if ch.Waiting != "" {
		if err := b.Flush(ctx); err != nil {
			return err
		}
		if _, err := b.tx.ExecContext(ctx, moveWaitingSQL,
			string(ch.Waiting), ch.WaitingReason, micros(ch.At), endpointID, deliveryID); err != nil {
			return fmt.Errorf("sqlitestore: update waiting deliveries: %w", err)
		}
		b.Forget(endpointID, deliveryID)
	}
	return insertAudit(ctx, b.tx, ch.Audit)
}

// Flush implements deliverybatch.Store: it writes the buffered changes.
func (b *batchApplier) Flush(ctx context.Context) error {
	if err := b.flushDeliveries(ctx); err != nil {
		return err
	}
	for _, id := range b.dirty {
		c := b.endpoints[id]
		c.dirty = false
		args, err := endpointArgs(c.ep)
		if err != nil {
			return err
		}
		if _, err := b.tx.ExecContext(ctx, updateEndpointSQL, endpointUpdateArgs(args)...); err != nil {
			return fmt.Errorf("sqlitestore: update endpoint: %w", err)
		}
	}
	b.dirty = b.dirty[:0]
	return nil
}

// Chunk sizes of the multi-row statements: a few prepared shapes serve any count.
var chunkSizes = []int{64, 16, 4, 1}

// chunks calls fn with successive ranges [i, j) of n rows sized from chunkSizes.
func chunks(n int, fn func(i, j int) error) error {
	for i := 0; i < n; {
		size := 1
		for _, s := range chunkSizes {
			if n-i >= s {
				size = s
				break
			}
		}
		if err := fn(i, i+size); err != nil {
			return err
		}
		i += size
	}
	return nil
}

// rowsSQL is "(?,?,...),(?,?,...)": rows groups of cols placeholders.
func rowsSQL(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}

// flushDeliveries writes the buffered delivery updates and attempts: a delivery's
// newest attempt goes into its row, the one it replaces there (if any) and any older
// one of the batch into outbox_attempts.
func (b *batchApplier) flushDeliveries(ctx context.Context) error {
	defer func() {
		b.Written()
		b.Attempts = b.Attempts[:0]
	}()
	newest := make(map[string]*outboxdriver.Attempt, len(b.Attempts))
	var older []outboxdriver.Attempt
	for i := range b.Attempts {
		a := &b.Attempts[i]
		if prev, ok := newest[a.DeliveryID]; ok {
			older = append(older, *prev)
		}
		newest[a.DeliveryID] = a
	}
	updated := make(map[string]bool, len(b.Updates))
	for _, d := range b.Updates {
		updated[d.ID] = true
	}
	var move []string
	for id, a := range newest {
		switch latest, known := b.latest[id]; {
		case !updated[id]: // no row update to carry it
			older = append(older, *a)
			delete(newest, id)
		case latest || !known:
			move = append(move, id)
		}
	}
	if err := moveLatestAttempts(ctx, b.tx, move); err != nil {
		return err
	}
	if err := insertAttempts(ctx, b.tx, older); err != nil {
		return err
	}
	err := chunks(len(b.Updates), func(i, j int) error {
		args := make([]any, 0, (j-i)*updateDeliveryArgs)
		for _, d := range b.Updates[i:j] {
			args = append(args, updateDeliveryValues(d, newest[d.ID])...)
		}
		if _, err := b.tx.ExecContext(ctx, updateDeliveriesSQL(j-i), args...); err != nil {
			return fmt.Errorf("sqlitestore: update deliveries: %w", err)
		}
		return nil
	})
	for id := range newest {
		b.latest[id] = true
	}
	return err
}

// updateDeliveriesSQL updates n deliveries from the rows of updateDeliveryValues: their
// mutable columns, their lease cleared, and their latest attempt when the row brings
// one (its number not NULL).
func updateDeliveriesSQL(n int) string {
	return `UPDATE outbox_deliveries SET status = v.column2, attempts = v.column3,
		run_start = v.column4, next_attempt_at = v.column5, fault_since = v.column6, last_error = v.column7,
		updated_at = v.column8, lease_until = NULL, lease_token = NULL,
		attempt_number = iif(v.column9 IS NULL, attempt_number, v.column9),
		attempt_at = iif(v.column9 IS NULL, attempt_at, v.column10),
		attempt_scheduled_at = iif(v.column9 IS NULL, attempt_scheduled_at, v.column11),
		attempt_duration_us = iif(v.column9 IS NULL, attempt_duration_us, v.column12),
		attempt_status = iif(v.column9 IS NULL, attempt_status, v.column13),
		attempt_class = iif(v.column9 IS NULL, attempt_class, v.column14),
		attempt_error = iif(v.column9 IS NULL, attempt_error, v.column15),
		attempt_response = iif(v.column9 IS NULL, attempt_response, v.column16)
		FROM (VALUES ` + rowsSQL(n, updateDeliveryArgs) + `) AS v WHERE outbox_deliveries.id = v.column1`
}

// updateDeliveryArgs is len(updateDeliveryValues(d, a)).
const updateDeliveryArgs = 8 + latestAttemptArgCount

// updateDeliveryValues is one row of updateDeliveriesSQL: d's mutable columns, and a
// as its latest attempt (nil: it keeps the one it has).
func updateDeliveryValues(d outboxdriver.Delivery, a *outboxdriver.Attempt) []any {
	return append([]any{d.ID, string(d.Status), d.Attempts, d.RunStart, micros(d.NextAttemptAt),
		microsPtr(d.FaultSince), d.LastError, micros(d.UpdatedAt)}, latestAttemptArgs(a)...)
}

// moveLatestAttempts moves the latest attempt of the deliveries ids from their rows
// to outbox_attempts (moveLatestAttemptsSQL).
func moveLatestAttempts(ctx context.Context, tx querier, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, moveLatestAttemptsSQL, string(list)); err != nil {
		return fmt.Errorf("sqlitestore: move attempts: %w", err)
	}
	return nil
}

// insertAttempts inserts attempts, as many rows a statement as SQLite takes.
func insertAttempts(ctx context.Context, tx querier, attempts []outboxdriver.Attempt) error {
	return chunks(len(attempts), func(i, j int) error {
		args := make([]any, 0, (j-i)*9)
		for _, a := range attempts[i:j] {
			args = append(args, attemptArgs(a)...)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (`+attemptColumns+`) VALUES `+rowsSQL(j-i, 9), args...); err != nil {
			return fmt.Errorf("sqlitestore: insert attempt: %w", err)
		}
		return nil
	})
}

// normalizedDelivery is d as a read after writing it returns it.
func normalizedDelivery(d outboxdriver.Delivery) outboxdriver.Delivery {
	d.NextAttemptAt, d.UpdatedAt = fromMicros(micros(d.NextAttemptAt)), fromMicros(micros(d.UpdatedAt))
	if d.FaultSince != nil {
		t := fromMicros(micros(*d.FaultSince))
		d.FaultSince = &t
	}
	return d
}

// normalizedEndpoint is ep as a read after writing it returns it: its columns go
// through the same encoding.
func normalizedEndpoint(ep outboxdriver.Endpoint) (outboxdriver.Endpoint, error) {
	args, err := endpointArgs(ep)
	if err != nil {
		return outboxdriver.Endpoint{}, err
	}
	var sc endpointScan
	for i, dst := range sc.Dest() {
		if err := convertColumn(dst, args[i]); err != nil {
			return outboxdriver.Endpoint{}, fmt.Errorf("sqlitestore: endpoint column %d: %w", i, err)
		}
	}
	return sc.endpoint()
}

// sameEncodedFields reports whether a and b agree on the fields stored as JSON.
func sameEncodedFields(a, b outboxdriver.Endpoint) bool {
	return reflect.DeepEqual(a.Events, b.Events) && reflect.DeepEqual(a.Secrets, b.Secrets) &&
		reflect.DeepEqual(a.Overrides, b.Overrides) && reflect.DeepEqual(a.Headers, b.Headers) &&
		reflect.DeepEqual(a.Channels, b.Channels) && bytes.Equal(a.Filter, b.Filter)
}

// normalizedTimes is ep with its times as a read after writing them returns them.
func normalizedTimes(ep outboxdriver.Endpoint) outboxdriver.Endpoint {
	for _, t := range []**time.Time{&ep.FailingSince, &ep.LastDeliveryAt, &ep.PausedAt, &ep.DisabledAt, &ep.HoldUntil, &ep.RemovedAt} {
		if *t != nil {
			v := fromMicros(micros(**t))
			*t = &v
		}
	}
	ep.CreatedAt = fromMicros(micros(ep.CreatedAt))
	return ep
}

// convertColumn stores v, an argument endpointArgs builds, into dst, a destination
// endpointScan.dest returns, as reading the column back would.
func convertColumn(dst, v any) error {
	switch d := dst.(type) {
	case *string:
		return assign(d, v)
	case *bool:
		return assign(d, v)
	case *int:
		return assign(d, v)
	case *int64:
		return assign(d, v)
	case *sql.NullInt64:
		switch x := v.(type) {
		case nil:
			*d = sql.NullInt64{}
		case int64:
			*d = sql.NullInt64{Int64: x, Valid: true}
		default:
			return fmt.Errorf("want int64 or nil, have %T", v)
		}
	default:
		return fmt.Errorf("unexpected destination %T", dst)
	}
	return nil
}

// assign stores v into d when v is a T.
func assign[T any](d *T, v any) error {
	x, ok := v.(T)
	if !ok {
		return fmt.Errorf("want %T, have %T", x, v)
	}
	*d = x
	return nil
}
