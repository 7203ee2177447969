// Package migrate applies a store's embedded, versioned schema migrations with
// pressly/goose and reports which are applied (docs/outbox.md §5). A Line is one set of
// migrations (the outbox's, later the node's) with the table that records them; the
// SQLite and PostgreSQL stores each embed theirs and call Up when they open, and
// `switchboard migrate` calls Up and List on a database URL.
//
// Safe when several processes start together on one database: on PostgreSQL, Up holds
// a session advisory lock (pg_advisory_lock, through goose's SessionLocker) keyed by the
// schema and the line, so one process migrates and the others then find nothing to
// do; on SQLite, which has no advisory locks, every migration runs in a transaction that
// takes the write lock at BEGIN and records its version under a primary key, so a
// process that lost the race rolls back whole and Up then finds the database migrated.
//
// The record of a line is its own table (<line>_migrations: version and applied_at),
// the table the outbox's hand-written runner kept before goose: a database it migrated
// is read as it is, and keeps opening with an older binary.
//
// It owns running migrations, not their content (the stores' migrations/ folders), nor
// opening databases.
package migrate
