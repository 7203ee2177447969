// Package pgstore is the outboxdriver.Store on PostgreSQL (pgx v5), for many nodes on one
// database (docs/outbox.md §5). It stands on package outboxdriver alone and passes the
// shared suite of outbox/outboxtest.
//
// Nodes share the work: a claim is one statement that selects due deliveries FOR
// UPDATE SKIP LOCKED, respects their endpoints' status, holds and in-flight caps (each
// endpoint's row keeps its count of leases, updated under that row's lock), leases them
// and returns them with their events and endpoints. Completions, the reaper and the
// retention purge lock what they change (the reaper and the purge SKIP LOCKED), so
// every node may run them at once and each expired lease is settled once. A publish
// that leaves deliveries to be claimed sends NOTIFY in its transaction; each Store
// LISTENs and wakes its subscribers (outboxdriver.Waker), polling being the fallback.
//
// Time. The database's clock is the reference, so that the nodes' clocks need not
// agree: claims take what is due at now() (the statement's transaction start), a lease
// lasts LeaseUntil minus Now from it, and the reaper reaps what expired before it;
// publish leases check holds at it. The other times of the seam's parameters are
// stored as given (schedules, health, attempts, Purge's Before, Recover's Now): the
// engine computes them on Store.Clock (outboxdriver.Clocked), the server's time read
// at Open and carried on this process's monotonic clock. Options.CallerTime makes
// the parameters' times the reference instead, as river's coalesce(@now, now()):
// for tests with a manual clock.
//
// Transactions. Programs that publish inside their own transaction (PublishTx) pass a
// pgx.Tx or a *sql.Tx of pgx's database/sql driver, begun on any connection to the
// same database: statements name their tables with the store's schema. Schema
// migrations are embedded and applied at Open under a session advisory lock (package
// internal/migrate), or by `switchboard migrate`.
//
// It does not keep the node's own tables (accounts, calls): those have their stores.
package pgstore
