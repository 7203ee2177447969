// Package pgnode is the PostgreSQL nodestore.Store: the node's records (accounts and
// their API tokens, applications, calls and their timelines, alerts, status hooks,
// notices' recipients) in one schema that any number of nodes share, beside the
// outbox's tables (outbox/pgstore). Its migrations are embedded and applied at Open
// through internal/migrate, under an advisory lock, so that nodes starting together
// migrate once (docs/outbox.md §5).
//
// Like sqlitenode it holds no policy: how a call of a lost node ends is the callback's
// of InterruptActiveCalls.
package pgnode
