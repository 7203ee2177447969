// Package pgtest gives tests a PostgreSQL schema of their own: Schema creates a fresh,
// empty schema on the test database and returns a URL whose connections use it
// (search_path), and drops it when the test ends, so that tests run in parallel without
// seeing each other's rows, as river's riverdbtest does.
//
// The test database is SWITCHBOARD_TEST_DATABASE_URL, or PostgreSQL on this machine
// (postgres://postgres@127.0.0.1:5432/test). When it cannot be reached, a test that
// needs it skips and says why; under CI (CI=true, as .ci/run sets) it fails instead,
// so that CI never passes without running them.
//
// It owns test schemas only: stores migrate their own.
package pgtest
