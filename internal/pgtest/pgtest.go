package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// EnvURL names the variable that points the tests at a PostgreSQL database.
const EnvURL = "SWITCHBOARD_TEST_DATABASE_URL"

// DefaultURL is the test database when EnvURL is not set: PostgreSQL on this machine
// with trust authentication, as on CI.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL returns the test database's URL: EnvURL's value, or DefaultURL.
func URL() string {
	if v := os.Getenv(EnvURL); v != "" {
		return v
	}
	return DefaultURL
}

// prefix starts every schema this package creates; the creation time follows it, so
// that schemas left by a test process that was killed are dropped later (stale).
const prefix = "pgtest_"

var (
	probe     sync.Once
	probeErr  error
	sweepOnce sync.Once
	counter   atomic.Int64
)

// Available reports whether the test database answers, and why not.
func Available() error {
	probe.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			probeErr = err
			return
		}
		defer conn.Close(ctx)
		probeErr = conn.Ping(ctx)
	})
	return probeErr
}

// Require skips t when the test database cannot be reached, or fails it under CI.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		testkit.SkipMissing(t, "PostgreSQL", fmt.Sprintf("%s is unreachable (%v); set %s to a database the tests may create schemas in",
			redacted(URL()), err, EnvURL))
	}
}

// Schema creates an empty schema for t and returns a database URL whose connections
// use it (search_path=<schema>), and its name. The schema and everything in it are
// dropped when t ends. It skips or fails t as Require does.
func Schema(t testing.TB) (dbURL, schema string) {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	sweepOnce.Do(func() { sweep(ctx, t, conn) })
	schema = fmt.Sprintf("%s%d_%d_%d", prefix, time.Now().Unix(), os.Getpid(), counter.Add(1))
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() { drop(t, schema) })
	dbURL, err = WithSchema(URL(), schema)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dbURL, schema
}

// WithSchema returns dbURL with its connections' search_path set to schema.
func WithSchema(dbURL, schema string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("%s must be a postgres:// URL", EnvURL)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func drop(t testing.TB, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Errorf("pgtest: connect to drop %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		t.Errorf("pgtest: drop schema %s: %v", schema, err)
	}
}

// sweep drops the schemas of this package older than an hour: those of test processes
// that were killed before their cleanup ran. Newer ones may belong to a package
// testing at the same time.
func sweep(ctx context.Context, t testing.TB, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'pgtest\_%'`)
	if err != nil {
		t.Logf("pgtest: listing stale schemas: %v", err)
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Logf("pgtest: listing stale schemas: %v", err)
		return
	}
	horizon := time.Now().Add(-time.Hour).Unix()
	for _, name := range names {
		created, err := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(name, prefix), "_", 2)[0], 10, 64)
		if err != nil || created >= horizon {
			continue
		}
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Logf("pgtest: dropping stale schema %s: %v", name, err)
		}
	}
}

// redacted is dbURL without its password, for messages.
func redacted(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
