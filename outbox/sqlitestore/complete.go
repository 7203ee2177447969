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
}

type cachedEndpoint struct {
	ep    outboxdriver.Endpoint
	dirty bool
}

func newBatchApplier(tx querier) *batchApplier {
	return &batchApplier{Batch: deliverybatch.New(), tx: tx, endpoints: map[string]*cachedEndpoint{}}
}

// load reads the deliveries ids in one query; ids not found are left out (purged).
func (b *batchApplier) load(ctx context.Context, ids []string) error {
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := b.tx.QueryContext(ctx, `SELECT `+deliveryColumns+`, coalesce(lease_token, '') FROM outbox_deliveries
		WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	return deliverybatch.Read[deliveryScan](&b.Batch, rows, err)
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
	if err := b.flushAttempts(ctx); err != nil {
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

func (b *batchApplier) flushDeliveries(ctx context.Context) error {
	err := chunks(len(b.Updates), func(i, j int) error {
		args := make([]any, 0, (j-i)*8)
		for _, d := range b.Updates[i:j] {
			args = append(args, d.ID, string(d.Status), d.Attempts, d.RunStart, micros(d.NextAttemptAt),
				microsPtr(d.FaultSince), d.LastError, micros(d.UpdatedAt))
		}
		_, err := b.tx.ExecContext(ctx, `UPDATE outbox_deliveries SET status = v.column2, attempts = v.column3,
			run_start = v.column4, next_attempt_at = v.column5, fault_since = v.column6, last_error = v.column7,
			updated_at = v.column8, lease_until = NULL, lease_token = NULL
			FROM (VALUES `+rowsSQL(j-i, 8)+`) AS v WHERE outbox_deliveries.id = v.column1`, args...)
		if err != nil {
			return fmt.Errorf("sqlitestore: update deliveries: %w", err)
		}
		return nil
	})
	b.Written()
	return err
}

func (b *batchApplier) flushAttempts(ctx context.Context) error {
	err := insertAttempts(ctx, b.tx, b.Attempts)
	b.Attempts = b.Attempts[:0]
	return err
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
