// Package nodestoretest is the conformance suite of nodestore.Store: every method's
// contract as a test, run by each implementation's own tests (Run) against fresh
// stores. It stands on package nodestore alone, so that a new database (PostgreSQL)
// proves itself against the same tests as SQLite.
package nodestoretest
