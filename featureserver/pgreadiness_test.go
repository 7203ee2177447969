package featureserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// On PostgreSQL, a write of the node that fails for the database's sake (here the
// database lost: the connection to it cut) turns /readyz 503 at once, as on SQLite,
// without waiting for the write probe, which runs here only once, at start; the
// condition is logged once at error. A write that succeeds once the database is back
// turns it 200, logged once at info (docs/security.md §3).
func TestFailedWritesTurnReadyzOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	proxy, viaProxy := pgtest.NewCutProxy(t, dbURL)
	cfg := pgConfig(t, viaProxy, "node-a")
	cfg.Cluster.Lease = time.Minute // the node keeps its calls' lease through the cut
	var logs testkit.SyncBuffer
	p := make(probes, 1)
	n := runNodeWith(t, cfg, zerolog.New(&logs), nodeHooks{probeInterval: time.Hour, probed: p.probed})
	p.waitPassing(t) // the probe at start, the only one
	if code, body := readyz(n); code != http.StatusOK {
		t.Fatalf("readyz %d %s before the cut", code, body)
	}

	proxy.SetCut(true)
	if code, _, raw := n.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": "lost"}, nil); code < 500 {
		t.Fatalf("an account created with the database cut: %d %s", code, raw)
	}
	if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
		t.Fatalf("readyz %d %s after a failed write, want 503 %s", code, body, notWritableBody)
	}
	if lines := strings.Count(logs.String(), "the node's database cannot be written"); lines != 1 {
		t.Errorf("%d lines saying the database cannot be written, want 1:\n%s", lines, logs.String())
	}

	proxy.SetCut(false)
	// Connections of the pool made before the cut fail as they are next used (a
	// failed statement each, which counts) until the pool has replaced them: write
	// until a write succeeds and no failure came after it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, _ := n.do("POST", "/v1/Accounts", testAdminToken, map[string]any{"name": "back"}, nil)
		if ready, _ := readyz(n); code == http.StatusCreated && ready == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			code, body := readyz(n)
			t.Fatalf("readyz %d %s with the database back, want 200 after a write succeeded", code, body)
		}
	}
	if !strings.Contains(logs.String(), "can be written again") {
		t.Errorf("no info line saying the database can be written again:\n%s", logs.String())
	}
}

// postgresFault counts what says the database cannot take writes, and nothing that
// a write's own data or its caller caused.
func TestPostgresFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "53100"}, true}, // disk_full
		{&pgconn.PgError{Code: "53200"}, true}, // out_of_memory
		{&pgconn.PgError{Code: "25006"}, true}, // read_only_sql_transaction
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "58030"}, true}, // io_error
		{&pgconn.PgError{Code: "XX001"}, true}, // data_corrupted
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{fmt.Errorf("claim: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "40001"}, false}, // serialization_failure
		{&pgconn.PgError{Code: "57014"}, false}, // query_canceled
		{context.Canceled, false},
		{fmt.Errorf("publish: %w", context.DeadlineExceeded), false},
		{pgx.ErrNoRows, false},
	} {
		if got := postgresFault(tc.err); got != tc.want {
			t.Errorf("postgresFault(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
