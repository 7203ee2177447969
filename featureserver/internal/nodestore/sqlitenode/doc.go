// Package sqlitenode is the embedded SQLite nodestore.Store: one database file in WAL
// mode, migrated at Open by the migrations embedded here (append-only: a released one
// is never edited). It shares the file with the outbox's store (outbox/sqlitestore),
// whose tables it does not touch.
//
// Records are kept as the rows say: a call's record as its JSON, beside the columns it
// is found by (account, creation time, active). It holds no policy: how a crashed
// call ends is the callback's of InterruptActiveCalls.
package sqlitenode
