package outboxbench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// A FloorDesign is the statements of one durable delivery on SQLite, with nothing
// around them: no Go decision, no claim, no read.
type FloorDesign interface {
	// setup prepares a fresh database (the store's migrations already applied).
	setup(db *sql.DB) error
	// publish stores new deliveries, leased as they are stored; record writes their
	// outcome: a first attempt that succeeded.
	publish(tx *sql.Tx, ids []string, now int64) error
	record(tx *sql.Tx, ids []string, now int64) error
}

// SchemaFloor is the store's own schema (every migration of outbox/sqlitestore): the
// event and its delivery, leased as it is stored; then the delivery's outcome with
// its attempt in its row, and the endpoint's health. These are the statements the
// store runs for a delivery handed to a worker at publish; any outbox on this schema
// does at least this much.
var SchemaFloor FloorDesign = schemaFloor{}

// MinimalFloor is one table holding the event and its delivery with only the due
// index, and one for attempts: what a store without a delivery log to list,
// per-endpoint caps or retention would write.
var MinimalFloor FloorDesign = minimalFloor{}

// floorBatch is the deliveries of one transaction.
const floorBatch = 64

// FloorOptions shape PipelineFloor.
type FloorOptions struct {
	// Deliveries to make. Default 3000.
	Deliveries int
	// Workers post at once, as the outbox's workers. Default 16.
	Workers int
	// Synchronous is the SQLite synchronous pragma, FULL (default) or NORMAL.
	Synchronous string
	// Dir holds the database file; default a new temporary directory, removed after.
	Dir string
	// Design is the statements; default SchemaFloor.
	Design FloorDesign
}

// PipelineFloor bounds the whole outbox on SQLite: the statements of a design run
// by one writer goroutine (the store's single writer), on a fresh store's file, with
// the HTTP posts of the plain client made from the deliveries it publishes by
// Workers goroutines in the same process, as the outbox's workers, to a loopback
// receiver of its own. Each transaction publishes up to 64 deliveries and records
// every outcome that has come back, with at most 256 deliveries in flight; there is
// no rendering, signing, claim, read or decision. It returns the delivery rate: no
// outbox on the design can deliver faster on the same machine.
func PipelineFloor(ctx context.Context, o FloorOptions) (float64, error) {
	if o.Deliveries <= 0 {
		o.Deliveries = 3000
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Design == nil {
		o.Design = SchemaFloor
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "switchboard-floor-"); err != nil {
			return 0, err
		}
		defer os.RemoveAll(dir)
	}
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, fmt.Sprintf("floor-%d.db", time.Now().UnixNano())),
		sqlitestore.Options{Synchronous: o.Synchronous})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return pipelineFloor(ctx, st.DB(), o)
}

func pipelineFloor(ctx context.Context, db *sql.DB, o FloorOptions) (float64, error) {
	const maxInFlight = 256
	// One connection, as the store's writer: its page cache stays warm.
	db.SetMaxOpenConns(1)
	if err := o.Design.setup(db); err != nil {
		return 0, err
	}
	rc, err := startReceiver()
	if err != nil {
		return 0, err
	}
	defer rc.close()
	body, err := plainBody(ctx)
	if err != nil {
		return 0, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.Workers}}
	defer client.CloseIdleConnections()
	// Both channels hold every delivery in flight: neither side ever blocks the other.
	jobs, done := make(chan string, maxInFlight), make(chan string, maxInFlight)
	var (
		wg      sync.WaitGroup
		postErr error
		errOnce sync.Once
	)
	defer func() { close(jobs); wg.Wait() }()
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				resp, err := client.Post(rc.url, "application/json", bytes.NewReader(body))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					err = resp.Body.Close()
				}
				if err != nil {
					errOnce.Do(func() { postErr = err })
				}
				done <- id
			}
		}()
	}
	n := o.Deliveries
	start := time.Now()
	published, recorded, inFlight, seq := 0, 0, 0, 0
	for recorded < n {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var finished []string
		if inFlight == maxInFlight || published == n {
			finished = append(finished, <-done) // nothing to publish: wait for an outcome
		}
	drain:
		for {
			select {
			case id := <-done:
				finished = append(finished, id)
			default:
				break drain
			}
		}
		now := time.Now().UnixMicro()
		var fresh []string
		for published+len(fresh) < n && inFlight+len(fresh) < maxInFlight && len(fresh) < floorBatch {
			seq++
			fresh = append(fresh, fmt.Sprintf("%016x%08x", now, seq)) // time-ordered, as the outbox's ids
		}
		err := inTx(db, func(tx *sql.Tx) error {
			if len(fresh) > 0 {
				if err := o.Design.publish(tx, fresh, now); err != nil {
					return err
				}
			}
			if len(finished) > 0 {
				return o.Design.record(tx, finished, now)
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("outboxbench: floor: %w", err)
		}
		for _, id := range fresh {
			jobs <- id
		}
		published += len(fresh)
		inFlight += len(fresh) - len(finished)
		recorded += len(finished)
	}
	rate := float64(n) / time.Since(start).Seconds()
	if postErr != nil {
		return 0, errors.Join(errors.New("outboxbench: floor: post"), postErr)
	}
	return rate, nil
}

// WriteFloor writes batches of 64 deliveries with a design's statements on db, one
// transaction for their publishes and one for their outcomes, batches times, with
// no HTTP: the least SQLite work a durable delivery costs. It returns the deliveries
// written.
func WriteFloor(db *sql.DB, design FloorDesign, batches int) (int, error) {
	db.SetMaxOpenConns(1)
	if err := design.setup(db); err != nil {
		return 0, err
	}
	seq := 0
	ids := make([]string, floorBatch)
	for range batches {
		now := time.Now().UnixMicro()
		for i := range ids {
			seq++
			ids[i] = fmt.Sprintf("%016x%08x", now, seq)
		}
		if err := inTx(db, func(tx *sql.Tx) error { return design.publish(tx, ids, now) }); err != nil {
			return 0, err
		}
		if err := inTx(db, func(tx *sql.Tx) error { return design.record(tx, ids, now) }); err != nil {
			return 0, err
		}
	}
	return batches * floorBatch, nil
}

// inTx runs fn in a transaction on db and commits it.
func inTx(db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// values is "(?,...),(?,...)": rows groups of cols placeholders.
func values(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}

type schemaFloor struct{}

func (schemaFloor) setup(db *sql.DB) error {
	_, err := db.Exec(`INSERT INTO outbox_endpoints (id, account, url, events, api_version, secrets, profile,
		overrides, managed, status, created_at, in_flight_cap)
		VALUES ('ep_floor', 'floor', 'https://example.com/hook', '[]', 'v1', '[]', 'standard', '{}', 0, 'ACTIVE', 0, 1000)`)
	return err
}

func (schemaFloor) publish(tx *sql.Tx, ids []string, now int64) error {
	events := make([]any, 0, len(ids)*6)
	deliveries := make([]any, 0, len(ids)*14)
	for _, id := range ids {
		events = append(events, "evt_"+id, "floor", "call.status", now, now, []byte(eventData))
		deliveries = append(deliveries, "dlv_"+id, "floor", "evt_"+id, "call.status", "ep_floor", "PENDING",
			0, 0, now, "", now, now, now+60e6, "pub_dlv_"+id)
	}
	if _, err := tx.Exec(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data) VALUES `+
		values(len(ids), 6), events...); err != nil {
		return err
	}
	_, err := tx.Exec(`INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status,
		attempts, run_start, next_attempt_at, last_error, created_at, updated_at, lease_until, lease_token)
		VALUES `+values(len(ids), 14), deliveries...)
	return err
}

func (schemaFloor) record(tx *sql.Tx, ids []string, now int64) error {
	outcomes := make([]any, 0, len(ids)*9)
	for _, id := range ids {
		outcomes = append(outcomes, "dlv_"+id, "SUCCEEDED", 1, now, 1, now, 800, 204, "success")
	}
	if _, err := tx.Exec(`UPDATE outbox_deliveries SET status = v.column2, attempts = v.column3,
		updated_at = v.column4, lease_until = NULL, lease_token = NULL, attempt_number = v.column5,
		attempt_at = v.column6, attempt_scheduled_at = v.column4, attempt_duration_us = v.column7,
		attempt_status = v.column8, attempt_class = v.column9, attempt_error = '', attempt_response = ''
		FROM (VALUES `+values(len(ids), 9)+`) AS v WHERE outbox_deliveries.id = v.column1`, outcomes...); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE outbox_endpoints SET failures = 0, last_delivery_at = ? WHERE id = 'ep_floor'`, now)
	return err
}

const minimalSchema = `
CREATE TABLE floor_deliveries (
    id TEXT PRIMARY KEY, type TEXT NOT NULL, data BLOB NOT NULL, endpoint_id TEXT NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER, updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX floor_deliveries_due ON floor_deliveries (next_attempt_at)
    WHERE status = 'PENDING' AND lease_until IS NULL;
CREATE TABLE floor_attempts (
    delivery_id TEXT NOT NULL, number INTEGER NOT NULL, at INTEGER NOT NULL, status INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, number)
) WITHOUT ROWID;`

type minimalFloor struct{}

func (minimalFloor) setup(db *sql.DB) error {
	_, err := db.Exec(minimalSchema)
	return err
}

func (minimalFloor) publish(tx *sql.Tx, ids []string, now int64) error {
	args := make([]any, 0, len(ids)*9)
	for _, id := range ids {
		args = append(args, id, "call.status", []byte(eventData), "ep_floor", "PENDING", 0, now, now+60e6, now)
	}
	_, err := tx.Exec(`INSERT INTO floor_deliveries VALUES `+values(len(ids), 9), args...)
	return err
}

func (minimalFloor) record(tx *sql.Tx, ids []string, now int64) error {
	outcomes := make([]any, 0, len(ids)*2)
	attempts := make([]any, 0, len(ids)*4)
	for _, id := range ids {
		outcomes = append(outcomes, id, now)
		attempts = append(attempts, id, 1, now, 204)
	}
	if _, err := tx.Exec(`UPDATE floor_deliveries SET status = 'SUCCEEDED', attempts = 1, lease_until = NULL,
		updated_at = v.column2 FROM (VALUES `+values(len(ids), 2)+`) AS v WHERE floor_deliveries.id = v.column1`,
		outcomes...); err != nil {
		return err
	}
	_, err := tx.Exec(`INSERT INTO floor_attempts VALUES `+values(len(ids), 4), attempts...)
	return err
}
