package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// TestGroupCommit: writes that queue behind a running transaction share the next one;
// a write that fails is rolled back alone (its savepoint) and the others commit.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s := openQueueTest(t)
	release, leads := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.write(ctx, func(q querier) error {
			close(leads)
			<-release // hold the lead while the others queue
			_, err := q.ExecContext(ctx, `INSERT INTO t (k) VALUES ('first')`)
			return err
		})
	}()
	<-leads // the first write runs its transaction
	leading := time.Now()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.write(ctx, func(q querier) error {
				if _, err := q.ExecContext(ctx, `INSERT INTO t (k) VALUES (?)`, fmt.Sprint(i)); err != nil {
					return err
				}
				if i%3 == 0 {
					return boom // after writing: the savepoint must undo it
				}
				return nil
			})
		}()
	}
	waitQueued(t, s, len(errs))
	held := time.Since(leading)
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	keys := tableKeys(t, s)
	for i, err := range errs {
		if (i%3 == 0) != errors.Is(err, boom) || i%3 != 0 && err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if fmt.Sprint(keys) != "[1 2 4 5 first]" {
		t.Fatalf("committed %v, want the failing writes (0, 3) undone and the rest kept", keys)
	}
	// Two transactions: the first write alone, then the six that queued behind it.
	// The first held its transaction open at least while the others queued.
	st := s.Stats()
	if st.Transactions != 2 || st.Writes != 7 || st.Busy < held || st.Committing <= 0 || st.Committing > st.Busy {
		t.Fatalf("stats %+v, want 2 transactions, 7 writes, busy ≥ %v, 0 < committing ≤ busy", st, held)
	}
}

// TestQueuedWriteWithdrawsOnCancel: a write still queued behind a running transaction
// returns its context's error when that ends, and never runs; the writes queued with
// it, including the one due to lead next, still run.
func TestQueuedWriteWithdrawsOnCancel(t *testing.T) {
	ctx := context.Background()
	s := openQueueTest(t)
	insert := func(ctx context.Context, k string) error {
		return s.write(ctx, func(q querier) error {
			_, err := q.ExecContext(ctx, `INSERT INTO t (k) VALUES (?)`, k)
			return err
		})
	}
	release, leads := make(chan struct{}), make(chan struct{})
	done := make(chan error, 2)
	go func() {
		done <- s.write(ctx, func(q querier) error { close(leads); <-release; return nil }) // holds the lead
	}()
	<-leads
	canceled, cancel := context.WithCancel(ctx)
	withdrawn := make(chan error, 1)
	go func() { withdrawn <- insert(canceled, "withdrawn") }()
	waitQueued(t, s, 1)
	go func() { done <- insert(ctx, "kept") }()
	waitQueued(t, s, 2)
	cancel()
	if err := <-withdrawn; !errors.Is(err, context.Canceled) {
		t.Fatalf("withdrawn write: %v", err)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	keys := tableKeys(t, s)
	if fmt.Sprint(keys) != "[kept]" {
		t.Fatalf("rows %v, want [kept]", keys)
	}
	if err := insert(ctx, "after"); err != nil { // the lead was handed on
		t.Fatal(err)
	}
}

// openQueueTest opens a store with a test table t whose queue notifies each write
// that joins it (waitQueued).
func openQueueTest(t *testing.T) *Store {
	t.Helper()
	s := openTest(t, "queue.db", Options{})
	if _, err := s.db.Exec(`CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	s.commits.queued = make(chan struct{}, 1)
	return s
}

// waitQueued returns once at least n writes wait behind the running transaction.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		s.commits.mu.Lock()
		queued := len(s.commits.queue)
		s.commits.mu.Unlock()
		if queued >= n {
			return
		}
		select {
		case <-s.commits.queued:
		case <-deadline.C:
			t.Fatalf("%d writes queued, want %d", queued, n)
		}
	}
}

// tableKeys returns the keys of the test table t, in order.
func tableKeys(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.Query(`SELECT k FROM t ORDER BY k`)
	keys, err := sqlrows.Collect(nil, rows, err, sqlrows.String)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestWriteThatFillsTheDatabaseFailsAlone: a write of a group that finds the file
// full gets SQLite's SQLITE_FULL, though SQLite rolls back the whole transaction on
// it (runTx): the writes before it, undone with it, say why, and the writes after it
// commit in a transaction of their own and say so. Before, every write of the group
// got COMMIT's "no transaction is active" (a logic error, which the node's readiness
// did not count as a full database) while the writes after the full one had each
// committed on their own.
func TestWriteThatFillsTheDatabaseFailsAlone(t *testing.T) {
	ctx := context.Background()
	s := openQueueTest(t)
	insert := func(k string) func(q querier) error {
		return func(q querier) error {
			_, err := q.ExecContext(ctx, `INSERT INTO t (k) VALUES (?)`, k)
			return err
		}
	}
	// The file may not grow: a write that needs a new page fails as on a full disk,
	// a small one still fits in the table's page.
	if err := s.write(ctx, func(q querier) error {
		_, err := q.ExecContext(ctx, `PRAGMA max_page_count = 1`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	release, leads := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.write(ctx, func(q querier) error { close(leads); <-release; return nil }) // holds the lead
	}()
	<-leads
	// Queued one after the other: the group runs them in this order.
	names := []string{"before", "full", "after"}
	fns := []func(q querier) error{insert("before"), insert(strings.Repeat("x", 64<<10)), insert("after")}
	errs := make([]chan error, len(fns))
	for i, fn := range fns {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- s.write(ctx, fn) }()
		waitQueued(t, s, i+1)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	full := func(err error) bool {
		var se *sqlite.Error
		return errors.As(err, &se) && se.Code()&0xff == 13 // SQLITE_FULL
	}
	got := map[string]error{}
	for i, name := range names {
		got[name] = <-errs[i]
	}
	if !full(got["full"]) || !full(got["before"]) || got["after"] != nil {
		t.Errorf("before: %v; full: %v; after: %v; want SQLITE_FULL, SQLITE_FULL, nil", got["before"], got["full"], got["after"])
	}
	if keys := tableKeys(t, s); fmt.Sprint(keys) != "[after]" {
		t.Errorf("committed %v, want [after]", keys)
	}
}
