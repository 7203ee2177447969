package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// groupCommit runs concurrent writes in shared transactions: one commit (one WAL sync
// under synchronous=FULL) serves every write that queued while the previous commit was
// on disk. Each write runs inside its own savepoint, so one that fails is rolled back
// alone and the others still commit. No goroutine runs in the background: the first
// writer to find no commit in progress leads, and hands the lead to a waiting writer
// when it is done.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*writeReq
	leading bool
	// What Stats reports.
	transactions, writes, busyNanos, commitNanos atomic.Int64
	// queued, when not nil (tests), is notified, without blocking, each time a write
	// joins the queue: tests wait for a queue's length on it instead of polling.
	queued chan struct{}
}

// Stats describes the single writer's work since Open. The writer runs every write
// transaction in turn, so it bounds the store's write rate: Busy close to the time
// elapsed means writes were queueing for it.
type Stats struct {
	// Transactions is the write transactions run; Writes the writes (a Publish, a
	// claim, a batch of outcomes...) they grouped.
	Transactions, Writes int64
	// Busy is the time spent in write transactions, from BEGIN to the end of COMMIT;
	// Committing the part spent in COMMIT, mostly writing and syncing the WAL.
	Busy, Committing time.Duration
}

// Stats returns the writer's figures since Open.
func (s *Store) Stats() Stats {
	g := &s.commits
	return Stats{Transactions: g.transactions.Load(), Writes: g.writes.Load(),
		Busy: time.Duration(g.busyNanos.Load()), Committing: time.Duration(g.commitNanos.Load())}
}

// maxGroup bounds the writes of one transaction.
const maxGroup = 256

type writeReq struct {
	// ctx is the caller's: it ends the wait while the write is still queued, and the
	// wait for the database lock when the write has a transaction of its own.
	ctx context.Context
	fn  func(q querier) error
	// pub, when set, is the Publish fn does: the group may write it together with
	// the other publishes of the transaction (publishTogether) instead of calling fn.
	pub  *pubReq
	done chan error
	lead chan struct{}
	// changed tells, once done has the outcome, whether fn changed rows (counted
	// only for Options.OnWrite).
	changed bool
}

// write runs fn in a write transaction shared with concurrent writers and returns
// once that transaction has committed (or fn's error, with fn's writes undone).
func (s *Store) write(ctx context.Context, fn func(q querier) error) error {
	return s.submit(ctx, &writeReq{fn: fn})
}

// WriteTx runs fn on the store's single writer, in a transaction shared with
// concurrent writes (each in a savepoint of its own: fn's error undoes fn's writes
// alone), and returns once that transaction committed, or fn's error. It lets a
// program keep its own tables in the same file with one writer for the file, rather
// than a second one competing for SQLite's lock. fn must not begin or end
// transactions, call the store, or keep tx.
func (s *Store) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.write(ctx, func(q querier) error { return fn(q.(conn).tx) })
}

// submit runs req in a write transaction shared with concurrent writers, and tells
// Options.OnWrite its outcome.
func (s *Store) submit(ctx context.Context, req *writeReq) error {
	err := s.queueAndRun(ctx, req)
	if s.onWrite != nil {
		s.onWrite(ctx, req.changed && err == nil, err)
	}
	return err
}

// queueAndRun runs req in a write transaction shared with concurrent writers.
func (s *Store) queueAndRun(ctx context.Context, req *writeReq) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req.ctx, req.done, req.lead = ctx, make(chan error, 1), make(chan struct{}, 1)
	g := &s.commits
	g.mu.Lock()
	g.queue = append(g.queue, req)
	if g.queued != nil {
		select {
		case g.queued <- struct{}{}:
		default:
		}
	}
	if g.leading {
		g.mu.Unlock()
		select {
		case err := <-req.done:
			return err
		case <-req.lead:
		case <-ctx.Done():
			if g.withdraw(req) {
				return ctx.Err()
			}
			// A leader took it into a transaction: that transaction decides.
			select {
			case err := <-req.done:
				return err
			case <-req.lead:
			}
		}
		g.mu.Lock()
	}
	g.leading = true
	g.mu.Unlock()
	// Writers that the previous commit released are runnable now and about to queue
	// their next write: let them, so that this transaction (and its sync) serves them
	// too instead of the next one.
	runtime.Gosched()
	g.mu.Lock()
	batch := g.queue
	if len(batch) > maxGroup {
		batch = batch[:maxGroup]
	}
	g.queue = append([]*writeReq(nil), g.queue[len(batch):]...)
	g.mu.Unlock()

	s.runGroup(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].lead <- struct{}{} // the next writer leads; leading stays true
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return <-req.done
}

// withdraw takes req out of the queue if no leader has taken it into a transaction,
// handing on the lead if it had just been given it, and reports whether it did.
func (g *groupCommit) withdraw(req *writeReq) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, req)
	if i < 0 {
		return false
	}
	g.queue = slices.Delete(g.queue, i, i+1)
	select {
	case <-req.lead: // it was to lead next: someone else must
		if len(g.queue) > 0 {
			g.queue[0].lead <- struct{}{}
		} else {
			g.leading = false
		}
	default:
	}
	return true
}

// runGroup runs a batch of writes in one transaction and reports to each.
func (s *Store) runGroup(batch []*writeReq) {
	// After the transaction, before the next can begin: the one connection is free.
	defer s.writes.prepareLater(context.Background())
	began := time.Now()
	defer func() {
		g := &s.commits
		g.busyNanos.Add(int64(time.Since(began)))
		g.writes.Add(int64(len(batch)))
	}()
	rest, together := batch, true
	for len(rest) > 0 {
		rest, together = s.runTx(rest, together)
		s.commits.transactions.Add(1)
	}
}

// runTx runs batch in one transaction and reports to each write. SQLite may roll
// back the whole transaction when a statement fails for the database's sake (a full
// disk, an I/O error: https://sqlite.org/lang_transaction.html, "Response To Errors
// Within A Transaction"); the savepoint of the write that failed is then gone, and
// the statements of the writes after it would each commit on their own while COMMIT
// failed for every write of the group with "no transaction is active", hiding the
// failed write's own error (a full disk reported as a logic error, unseen by
// Options.OnWrite's caller). Instead the write that failed gets its own error, the
// writes before it (undone with the transaction) that error too, and runTx returns
// the writes not yet run, for a transaction of their own; together tells whether
// the group's publishes may be written together (not after such a loss).
func (s *Store) runTx(batch []*writeReq, together bool) (rest []*writeReq, restTogether bool) {
	errs := make([]error, len(batch))
	// A write alone in its transaction waits for the database lock (held by another
	// process, or by a caller's own transaction on DB) no longer than its caller
	// does; a shared transaction serves writers that may still want it.
	begin := context.Background()
	if len(batch) == 1 {
		begin = batch[0].ctx
	}
	tx, err := s.writer.BeginTx(begin, nil)
	if err != nil {
		for _, r := range batch {
			r.done <- err
		}
		return nil, false
	}
	q := conn{cache: &s.writes, tx: tx}
	single := len(batch) == 1
	batched := make([]bool, len(batch))
	// Whether each write changed rows, for OnWrite: the connection's count of rows
	// changed before and after it (-1 when unknown).
	watch := s.onWrite != nil
	total := int64(-1)
	changes := func(r *writeReq) {
		if watch {
			now := totalChanges(q)
			r.changed = total >= 0 && now > total
			total = now
		}
	}
	if watch {
		total = totalChanges(q)
	}
	if !single && together {
		if lost := s.publishTogether(q, batch, batched); lost {
			// Nothing of the group is written: run each write on its own.
			_ = tx.Rollback()
			return batch, false
		}
		for i, r := range batch {
			r.changed = batched[i] // a new event each
		}
		if watch && slices.Contains(batched, true) {
			total = totalChanges(q)
		}
	}
	bg := context.Background()
	for i, r := range batch {
		if batched[i] {
			continue
		}
		if single {
			errs[i] = r.fn(q)
			changes(r)
			continue
		}
		if _, err := q.ExecContext(bg, `SAVEPOINT w`); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = r.fn(q)
		changes(r)
		if errs[i] != nil {
			if _, err := q.ExecContext(bg, `ROLLBACK TO w`); err != nil {
				return s.lostTx(tx, batch, i, errs[i]), false
			}
		}
		if _, err := q.ExecContext(bg, `RELEASE w`); err != nil {
			if errs[i] == nil {
				errs[i] = err
			}
			return s.lostTx(tx, batch, i, errs[i]), false
		}
	}
	if single && errs[0] != nil {
		_ = tx.Rollback()
		batch[0].done <- errs[0]
		return nil, false
	}
	committing := time.Now()
	err = tx.Commit()
	s.commits.commitNanos.Add(int64(time.Since(committing)))
	if err != nil {
		for _, r := range batch {
			r.done <- err
		}
		return nil, false
	}
	for i, r := range batch {
		r.done <- errs[i]
	}
	return nil, false
}

// totalChanges is the count of rows the writer connection has changed since it
// opened (SQLite's total_changes()), or -1 if it cannot be read.
func totalChanges(q querier) int64 {
	var n int64
	if err := q.QueryRowContext(context.Background(), `SELECT total_changes()`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// lostTx ends a transaction that write i of batch lost with err (SQLite rolled it
// back, or its savepoint could not be rolled back or released, which leaves it in no
// known state): it rolls back what remains of it, tells write i err and the writes
// before it, undone with it, the same cause, and returns the writes after i, which
// have not run.
func (s *Store) lostTx(tx *sql.Tx, batch []*writeReq, i int, err error) []*writeReq {
	_ = tx.Rollback() // fails harmlessly when SQLite has rolled back already
	for _, r := range batch[:i] {
		r.done <- fmt.Errorf("sqlitestore: the write was undone with its transaction, which another write in it lost: %w", err)
	}
	batch[i].done <- err
	return batch[i+1:]
}

// querier is what reads and writes need, from the pool or from a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// conn runs statements through a prepared-statement cache, on a transaction when tx
// is set (begun on the cache's handle) and on the handle otherwise.
type conn struct {
	cache *stmtCache
	tx    *sql.Tx
}

func (s *Store) read() querier { return conn{cache: &s.reads} }

// on is a caller's transaction, begun on DB.
func (s *Store) on(tx *sql.Tx) querier { return conn{cache: &s.reads, tx: tx} }

func (c conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	cache := c.cache
	cache.mu.Lock()
	st, ok := cache.stmts[query]
	if !ok && c.tx != nil && cache.oneConn {
		cache.later = append(cache.later, query)
		cache.mu.Unlock()
		return c.tx.PrepareContext(ctx, query)
	}
	cache.mu.Unlock()
	if !ok {
		var err error
		if st, err = cache.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		cache.mu.Lock()
		if prev, raced := cache.stmts[query]; raced {
			_ = st.Close()
			st = prev
		} else {
			cache.stmts[query] = st
		}
		cache.mu.Unlock()
	}
	if c.tx != nil {
		return c.tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func (c conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		// A *sql.Row cannot be built with an error outside database/sql; run the query
		// unprepared so that Scan reports the same error.
		if c.tx != nil {
			return c.tx.QueryRowContext(ctx, query, args...)
		}
		return c.cache.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}
