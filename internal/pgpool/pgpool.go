package pgpool

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/switchboard-voice/switchboard/internal/migrate"
)

// URLError is a database URL that does not parse.
type URLError struct{ Err error }

func (e *URLError) Error() string { return "database URL: " + e.Err.Error() }

func (e *URLError) Unwrap() error { return e.Err }

// Connect makes a pool for dbURL (postgres://...) of maxConns connections, unless the
// URL's pool_max_conns sets its own bound; appName, when not empty, names its
// connections in pg_stat_activity unless the URL's application_name does; tracer,
// when not nil, traces every connection's statements (and, as it implements them,
// its batches and connects: pgx's tracer interfaces). A URL that does not parse is
// a *URLError.
func Connect(ctx context.Context, dbURL string, maxConns int32, appName string, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, &URLError{Err: err}
	}
	if !strings.Contains(dbURL, "pool_max_conns=") {
		cfg.MaxConns = maxConns
	}
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set && appName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = appName
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

// CurrentSchema is the first schema of the pool's connections' search_path that
// exists; ok is false when none does.
func CurrentSchema(ctx context.Context, pool *pgxpool.Pool) (schema string, ok bool, err error) {
	var cur *string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&cur); err != nil {
		return "", false, err
	}
	if cur == nil {
		return "", false, nil
	}
	return *cur, true, nil
}

// Migrate applies line in schema (internal/migrate, under its advisory lock), on
// connections of their own whose search_path is that schema: the pool's may name
// another.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, line migrate.Line) error {
	cc := pool.Config().ConnConfig.Copy()
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	db := stdlib.OpenDB(*cc)
	defer db.Close()
	_, err := migrate.Up(ctx, db, migrate.Postgres, line)
	return err
}
