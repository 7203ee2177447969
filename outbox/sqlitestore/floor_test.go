package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/outboxbench"
	"github.com/switchboard-voice/switchboard/outbox"
)

// BenchmarkWriteFloor measures the least SQLite work a durable delivery can cost, to
// bound what any outbox on this store can reach: only the statements, with no Go
// around them, no claim, no reads and no HTTP, one goroutine writing, 64 deliveries a
// transaction with synchronous=FULL (a commit for the publishes, one for their
// outcomes). In the same run it measures the plain client of outboxbench, and reports
// ceiling-ratio: the floor's delivery rate over the plain client's posts. The writer
// is serial, so no outbox on the schema can deliver faster than its floor, and
// sharing the CPU with the HTTP work lowers it further.
//
//   - schema: the store's own tables and indexes (every migration): the event and its
//     delivery, leased as it is stored; then the delivery's outcome, its attempt, and
//     the endpoint's health.
//   - minimal: one table holding the event and its delivery with only the due index,
//     and one for attempts: what a store without a delivery log to list, per-endpoint
//     caps or retention would write.
//
// Run it with:
//
//	go test -run '^$' -bench WriteFloor ./outbox/sqlitestore
func BenchmarkWriteFloor(b *testing.B) {
	// 20,000 posts: a baseline of the default 3,000 takes a fraction of a second and
	// swings with the machine's load.
	plain, err := outboxbench.Plain(context.Background(), outboxbench.Options{Deliveries: 20000})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("schema", func(b *testing.B) {
		st := open(b, filepath.Join(b.TempDir(), "floor.db"))
		writeFloor(b, st.DB(), plain, schemaFloor{})
	})
	b.Run("minimal", func(b *testing.B) {
		st := open(b, filepath.Join(b.TempDir(), "floor.db"))
		if _, err := st.DB().Exec(minimalSchema); err != nil {
			b.Fatal(err)
		}
		writeFloor(b, st.DB(), plain, minimalFloor{})
	})
}

// BenchmarkPipelineFloor bounds the whole outbox on this store: the floor statements
// of BenchmarkWriteFloor run by one writer goroutine, with the HTTP posts of the plain
// client made from the deliveries it publishes, by 16 goroutines in the same process,
// as the outbox's workers. Each transaction publishes up to 64 deliveries and records
// every outcome that has come back, with at most 256 deliveries in flight; there is no
// rendering, signing, claim, read or decision. It reports ratio: its delivery rate over
// the plain client's posts in the same run (20,000 of each). No outbox on the schema
// can reach a higher ratio on the same machine.
//
//	go test -run '^$' -bench PipelineFloor ./outbox/sqlitestore
func BenchmarkPipelineFloor(b *testing.B) {
	const n = 20000
	plain, err := outboxbench.Plain(context.Background(), outboxbench.Options{Deliveries: n})
	if err != nil {
		b.Fatal(err)
	}
	for _, design := range []struct {
		name string
		st   floorStatements
		ddl  string
	}{{"schema", schemaFloor{}, ""}, {"minimal", minimalFloor{}, minimalSchema}} {
		b.Run(design.name, func(b *testing.B) {
			var rate float64
			for b.Loop() {
				st := open(b, filepath.Join(b.TempDir(), "floor.db"))
				if design.ddl != "" {
					if _, err := st.DB().Exec(design.ddl); err != nil {
						b.Fatal(err)
					}
				}
				rate = pipelineFloor(b, st.DB(), design.st, n)
			}
			b.ReportMetric(rate, "deliveries/s")
			b.ReportMetric(plain, "plain-posts/s")
			b.ReportMetric(rate/plain, "ratio")
		})
	}
}

// pipelineFloor delivers n deliveries through st's statements and a loopback
// receiver, and returns the rate.
func pipelineFloor(b *testing.B, db *sql.DB, st floorStatements, n int) float64 {
	const workers, maxInFlight = 16, 256
	db.SetMaxOpenConns(1)
	if err := st.setup(db); err != nil {
		b.Fatal(err)
	}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	body, err := outbox.DefaultRenderer(context.Background(), outbox.Event{ID: "evt_floor", Type: "call.status",
		CreatedAt: time.Now(), Data: floorData}, outbox.Endpoint{APIVersion: "v1"})
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	// Both channels hold every delivery in flight: neither side ever blocks the other.
	jobs, done := make(chan string, maxInFlight), make(chan string, maxInFlight)
	var wg sync.WaitGroup
	defer func() { close(jobs); wg.Wait() }()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				resp, err := client.Post(receiver.URL, "application/json", bytes.NewReader(body))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					err = resp.Body.Close()
				}
				if err != nil {
					b.Error(err)
				}
				done <- id
			}
		}()
	}
	start := time.Now()
	published, recorded, inFlight, seq := 0, 0, 0, 0
	for recorded < n {
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
			fresh = append(fresh, fmt.Sprintf("%016x%08x", now, seq))
		}
		err := inTx(db, func(tx *sql.Tx) error {
			if len(fresh) > 0 {
				if err := st.publish(tx, fresh, now); err != nil {
					return err
				}
			}
			if len(finished) > 0 {
				return st.record(tx, finished, now)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range fresh {
			jobs <- id
		}
		published += len(fresh)
		inFlight += len(fresh) - len(finished)
		recorded += len(finished)
	}
	return float64(n) / time.Since(start).Seconds()
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

// floorBatch is the deliveries of one transaction.
const floorBatch = 64

// floorStatements writes one batch: its publishes, then their outcomes.
type floorStatements interface {
	setup(db *sql.DB) error
	publish(tx *sql.Tx, ids []string, now int64) error
	record(tx *sql.Tx, ids []string, now int64) error
}

func writeFloor(b *testing.B, db *sql.DB, plainPerSecond float64, st floorStatements) {
	// One connection, as the store's writer: the page cache stays warm.
	db.SetMaxOpenConns(1)
	if err := st.setup(db); err != nil {
		b.Fatal(err)
	}
	seq, n := 0, 0
	ids := make([]string, floorBatch)
	for b.Loop() {
		now := time.Now().UnixMicro()
		for i := range ids {
			seq++
			ids[i] = fmt.Sprintf("%016x%08x", now, seq) // time-ordered, as the outbox's ids
		}
		if err := inTx(db, func(tx *sql.Tx) error { return st.publish(tx, ids, now) }); err != nil {
			b.Fatal(err)
		}
		if err := inTx(db, func(tx *sql.Tx) error { return st.record(tx, ids, now) }); err != nil {
			b.Fatal(err)
		}
		n += floorBatch
	}
	perDelivery := b.Elapsed().Seconds() / float64(n)
	b.ReportMetric(perDelivery*1e6, "µs/delivery")
	b.ReportMetric(plainPerSecond, "plain-posts/s")
	b.ReportMetric(1/perDelivery/plainPerSecond, "ceiling-ratio")
}

// values is "(?,...),(?,...)": rows groups of cols placeholders.
func values(rows, cols int) string {
	one := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(one+",", rows-1) + one
}

var floorData = []byte(`{"callSid":"CA0123456789abcdef","status":"completed"}`)

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
		events = append(events, "evt_"+id, "floor", "call.status", now, now, floorData)
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
	outcomes := make([]any, 0, len(ids)*4)
	attempts := make([]any, 0, len(ids)*9)
	for _, id := range ids {
		outcomes = append(outcomes, "dlv_"+id, "SUCCEEDED", 1, now)
		attempts = append(attempts, "dlv_"+id, 1, now, now, 800, 204, "success", "", "")
	}
	if _, err := tx.Exec(`UPDATE outbox_deliveries SET status = v.column2, attempts = v.column3,
		updated_at = v.column4, lease_until = NULL, lease_token = NULL
		FROM (VALUES `+values(len(ids), 4)+`) AS v WHERE outbox_deliveries.id = v.column1`, outcomes...); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO outbox_attempts (delivery_id, number, at, scheduled_at, duration_us,
		status, class, error, response) VALUES `+values(len(ids), 9), attempts...); err != nil {
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

func (minimalFloor) setup(*sql.DB) error { return nil }

func (minimalFloor) publish(tx *sql.Tx, ids []string, now int64) error {
	args := make([]any, 0, len(ids)*9)
	for _, id := range ids {
		args = append(args, id, "call.status", floorData, "ep_floor", "PENDING", 0, now, now+60e6, now)
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
