// Package pgpool opens the PostgreSQL stores' pools (the outbox's pgstore and the
// node's pgnode) and migrates their schemas: what the two do alike before their own
// statements run.
package pgpool
