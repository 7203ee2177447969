// Package outboxtest is the conformance suite every outbox.Store implementation must
// pass: Run takes a factory of fresh stores and checks each Store method's contract
// (claims in one statement that respect status, holds and in-flight caps; lease
// tokens; changes applied atomically; isolation between accounts; bounded purges)
// with time pinned by parameters.
//
// The SQLite store runs it in sqlitestore's tests; the PostgreSQL store runs the same
// function.
package outboxtest
