package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// BacklogOptions shape `bench backlog`.
type BacklogOptions struct {
	// Scheduled is the deliveries waiting for a later time in the large store.
	Scheduled int
	// Baseline is the deliveries scheduled in the baseline store.
	Baseline int
	// Head is how many deliveries are due at each claim, and the claim's limit.
	Head int
	// Claims is how many claims each side times a round.
	Claims int
	Rounds int
	// Synchronous is the timed stores' sqlitestore.Options.Synchronous: "FULL" (the
	// default, the store's) syncs the WAL at every commit, the claim's included;
	// "NORMAL" leaves the sync to checkpoints, so the claim's own work is what is timed.
	Synchronous string
	// Dir holds the database files; default a temporary directory, removed after.
	Dir string
	// Progress, when set, is told how the filling goes.
	Progress func(string)
}

// backlogEndpoints is how many endpoints the scheduled deliveries spread over: each
// event fans out to all of them, as an account with many subscribers does.
const backlogEndpoints = 100

// Backlog measures a claim at the head of a SQLite store holding o.Scheduled
// deliveries scheduled for later (retries waiting out their backoff), against the
// same claim on a store holding only o.Baseline: the time of one claim of o.Head
// due deliveries, and the process's memory with the store open after the claims
// (Go heap, and on Linux the resident set, which also counts SQLite's page cache).
// The claim is timed whole: its write transaction through the commit, whose sync
// (o.Synchronous) is part of it.
// Ratios near 1 mean the backlog costs the head nothing and memory stays flat.
func Backlog(ctx context.Context, o BacklogOptions) ([]Result, error) {
	if o.Scheduled < 1 || o.Baseline < 0 || o.Head < 1 || o.Claims < 1 {
		return nil, fmt.Errorf("benchkit: scheduled, head and claims must be at least 1, baseline not negative")
	}
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	dir := o.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "switchboard-backlog-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	now := time.Now()
	big, small := filepath.Join(dir, "backlog.db"), filepath.Join(dir, "baseline.db")
	for _, f := range []struct {
		path string
		n    int
	}{{big, o.Scheduled}, {small, o.Baseline}} {
		if err := fillBacklog(ctx, f.path, f.n, now, progress); err != nil {
			return nil, err
		}
	}
	var seq atomic.Int64
	side := func(path string) Side {
		return func(ctx context.Context, round int) (map[string]float64, error) {
			st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Synchronous: o.Synchronous})
			if err != nil {
				return nil, err
			}
			defer st.Close()
			took := make([]float64, 0, o.Claims)
			for range o.Claims {
				at := time.Now()
				if err := publishDue(ctx, st, fmt.Sprintf("evt_head_%d", seq.Add(1)), o.Head, at); err != nil {
					return nil, err
				}
				start := time.Now()
				jobs, err := st.Claim(ctx, outboxdriver.ClaimParams{Now: at, LeaseUntil: at.Add(time.Minute), Limit: o.Head,
					Token: fmt.Sprintf("tok_%d", seq.Add(1))})
				took = append(took, float64(time.Since(start).Microseconds())/1000)
				if err != nil {
					return nil, err
				}
				if len(jobs) != o.Head {
					return nil, fmt.Errorf("claim at the head took %d deliveries, want %d", len(jobs), o.Head)
				}
				done := make([]outboxdriver.Completion, len(jobs))
				for i, j := range jobs {
					done[i] = succeeded(j, at)
				}
				if _, err := st.Complete(ctx, done); err != nil {
					return nil, err
				}
			}
			// Measured with the store open, its caches warm.
			heap, rss := memoryNow()
			return map[string]float64{"claim at the head": Summarise(took).Median,
				"heap while claiming": float64(heap), "resident set while claiming": float64(rss)}, nil
		}
	}
	return Interleave(ctx, o.Rounds, []Measure{{"claim at the head", "ms", Lower}, {"heap while claiming", "B", Lower},
		{"resident set while claiming", "B", Lower}}, side(big), side(small))
}

// fillBacklog creates a store at path with backlogEndpoints endpoints and n
// deliveries scheduled an hour or more after now.
func fillBacklog(ctx context.Context, path string, n int, now time.Time, progress func(string)) error {
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Synchronous: "NORMAL"})
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range backlogEndpoints {
		ep := outboxdriver.Endpoint{ID: fmt.Sprintf("ep_%03d", i), Account: "bench", URL: fmt.Sprintf("https://example.com/%d", i),
			Events: []string{"*"}, APIVersion: "v1", Secrets: []outboxdriver.Secret{{Key: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}},
			Profile: "standard", Status: outboxdriver.EndpointActive, CreatedAt: now, InFlightCap: 1000}
		if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: ep, Audit: outboxdriver.AuditEntry{
			Account: ep.Account, EndpointID: ep.ID, Action: outboxdriver.AuditCreated, At: now}}); err != nil {
			return err
		}
	}
	// Published in the caller's transactions of many events each: one commit per
	// thousands of rows instead of the group commit's per few publishes, which makes
	// filling a million deliveries take seconds, not minutes.
	events := (n + backlogEndpoints - 1) / backlogEndpoints
	const perTx = 200
	for first := 1; first <= events; first += perTx {
		tx, err := st.DB().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i := first; i < min(first+perTx, events+1); i++ {
			// Spread over the next day, as retries in backoff are.
			due := now.Add(time.Hour + time.Duration(i)*24*time.Hour/time.Duration(events))
			ev := outboxdriver.Event{ID: "evt_" + strconv.Itoa(i), Account: "bench", Type: "call.status", CreatedAt: now, Data: benchData}
			left, k := n-(i-1)*backlogEndpoints, 0
			if _, err := st.Publish(ctx, outboxdriver.PublishParams{Tx: tx, Event: ev, Now: now, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
				if k++; k > left {
					return outboxdriver.Delivery{}, nil, false
				}
				return outboxdriver.Delivery{ID: "dlv_" + ev.ID + "_" + ep.ID, Account: ev.Account, EventID: ev.ID, EventType: ev.Type,
					EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: due, CreatedAt: now, UpdatedAt: now}, nil, true
			}}); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if step := max(events/10/perTx*perTx, perTx); (first-1+perTx)%step == 0 || first+perTx > events {
			progress(fmt.Sprintf("%s: %d of %d deliveries scheduled", filepath.Base(path), min((first-1+perTx)*backlogEndpoints, n), n))
		}
	}
	return nil
}

var benchData = json.RawMessage(`{"callSid":"CA0123456789abcdef","status":"completed"}`)

// publishDue publishes one event whose deliveries (one per endpoint, head of them)
// are due at at.
func publishDue(ctx context.Context, st outboxdriver.Store, id string, head int, at time.Time) error {
	ev := outboxdriver.Event{ID: id, Account: "bench", Type: "call.status", CreatedAt: at, Data: benchData}
	var k atomic.Int64
	pub, err := st.Publish(ctx, outboxdriver.PublishParams{Event: ev, Now: at, Plan: func(ep outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		if k.Add(1) > int64(head) {
			return outboxdriver.Delivery{}, nil, false
		}
		return outboxdriver.Delivery{ID: "dlv_" + id + "_" + ep.ID, Account: ev.Account, EventID: id, EventType: ev.Type,
			EndpointID: ep.ID, Status: outboxdriver.DeliveryPending, NextAttemptAt: at, CreatedAt: at, UpdatedAt: at}, nil, true
	}})
	if err == nil && len(pub.Deliveries) != head {
		err = fmt.Errorf("benchkit: head event made %d deliveries, want %d (at most %d)", len(pub.Deliveries), head, backlogEndpoints)
	}
	return err
}

// succeeded completes job with a successful attempt, as the engine's decision does.
func succeeded(job outboxdriver.Job, at time.Time) outboxdriver.Completion {
	return outboxdriver.Completion{DeliveryID: job.Delivery.ID, Token: job.Token,
		Decide: func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
			nd := d
			nd.Attempts++
			nd.Status, nd.UpdatedAt, nd.LeaseUntil = outboxdriver.DeliverySucceeded, at, nil
			ne := ep
			ne.Failures, ne.FailingSince, ne.LastDeliveryAt = 0, nil, &at
			return outboxdriver.Change{At: at, Delivery: &nd, Endpoint: &ne, Attempt: &outboxdriver.Attempt{DeliveryID: d.ID,
				Number: nd.Attempts, At: at, ScheduledAt: d.NextAttemptAt, Duration: time.Millisecond,
				Status: 204, Class: outboxdriver.ClassSuccess}}, nil
		}}
}

// memoryNow is the Go heap after collections, and the resident set where /proc
// tells it (0 elsewhere).
func memoryNow() (heap, rss int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			rss = pages * int64(os.Getpagesize())
		}
	}
	return int64(m.HeapAlloc), rss
}
