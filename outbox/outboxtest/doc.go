// Package outboxtest is the conformance suite every outboxdriver.Store implementation
// must pass: Run takes a factory of fresh stores and checks each Store method's
// contract (atomic claims that respect status, holds and in-flight caps; lease tokens;
// changes applied atomically, a batch of completions as if one after the other; a
// completion and the claim made with it in one transaction; a caller's transaction,
// and the refusal of one of a foreign type; isolation between accounts; bounded
// purges) with time pinned by parameters. It stands on package outboxdriver alone.
//
// The SQLite store runs it in sqlitestore's tests; the PostgreSQL store runs the same
// function.
package outboxtest
