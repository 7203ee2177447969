// Package sqlitestore is the embedded outboxdriver.Store: one SQLite database file
// (pure Go, modernc.org/sqlite) in WAL mode with synchronous=FULL by default, schema
// applied from embedded migrations at Open. It stands on package outboxdriver alone
// and passes the shared suite of outbox/outboxtest.
//
// Durability: with WAL, synchronous=FULL syncs the log on every commit, so an event is
// on disk when Publish returns and survives power loss; NORMAL (an option) survives a
// process crash but may lose the last commits on power loss. Writers begin with
// BEGIN IMMEDIATE (_txlock=immediate) and queue on a mutex inside the process and on
// busy_timeout across processes. Concurrent writes share transactions (group commit:
// one WAL sync serves them all). A claim reads its window of due deliveries and leases
// its choice in one UPDATE inside a transaction that holds the write lock from BEGIN;
// a batch of completions costs a few multi-row statements, and the claim that refills
// the pool runs in the same transaction.
//
// Times are stored as Unix microseconds. Programs that publish inside their own
// transaction (the outbox's PublishTx) begin a *sql.Tx on DB() and pass it; the store
// refuses any other transaction type with ErrInvalid.
package sqlitestore
