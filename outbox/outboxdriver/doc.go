// Package outboxdriver is the seam between the outbox engine (package outbox) and a
// database: the Store interface that a store implements, the rows it keeps (Event,
// Endpoint, Delivery, Attempt, AuditEntry and the values they hold), one params struct
// per method that has several inputs, the callbacks through which the engine decides
// a change inside the store's transaction (PlanFunc, ChangeFunc, DecideFunc), and the
// sentinel errors a store wraps. It is what river's riverdriver is to river.
//
// Store implementers import this package and nothing else of the outbox: the SQLite
// store (outbox/sqlitestore) and the PostgreSQL store implement Store and pass the
// shared suite in outbox/outboxtest, which stands on this package too. Programs that
// only use the outbox import package outbox, whose model types are these rows under
// the same names.
//
// The package holds no policy and no I/O: what a row's values mean (profiles, retries,
// pauses) is the engine's, and every time a store writes comes in as a parameter, so
// that tests pin it.
package outboxdriver
