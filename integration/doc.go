// Package integration holds end-to-end tests across processes: the switchboard binary
// against real application servers (ours and apps written with the official jambonz
// Node SDKs), fault-injecting servers, crash tests of the outbox and multi-node tests.
//
// Tests that need Node.js or PostgreSQL skip with a message saying so when those are
// absent, except under CI=true, where a missing dependency is a failure.
package integration
