package featureserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// poolConns bounds the connections of a node to PostgreSQL when the URL's
// pool_max_conns does not: the outbox's publishes, claims and completions (16, as
// pgstore's own default) and the node store's records share one pool.
const poolConns = 24

// database is where a node keeps everything: one SQLite file, or one PostgreSQL
// database (a schema of it) that several nodes share (docs/outbox.md §5).
type database struct {
	loc  dburl.Location
	pool *pgxpool.Pool // PostgreSQL only
}

// openDatabase connects to loc (PostgreSQL) or does nothing yet (SQLite: each store
// opens the file).
func openDatabase(ctx context.Context, loc dburl.Location) (*database, error) {
	db := &database{loc: loc}
	if loc.Driver != dburl.Postgres {
		return db, nil
	}
	cfg, err := pgxpool.ParseConfig(loc.URL)
	if err != nil {
		return nil, &ConfigError{Name: EnvDatabaseURL, Value: dburl.Redact(loc.URL), Accept: "a PostgreSQL connection URL"}
	}
	if !strings.Contains(loc.URL, "pool_max_conns=") {
		cfg.MaxConns = poolConns
	}
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set {
		cfg.ConnConfig.RuntimeParams["application_name"] = "switchboard-node" // pg_stat_activity says whose
	}
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", dburl.Redact(loc.URL), err)
	}
	if err := db.pool.Ping(ctx); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", dburl.Redact(loc.URL), err)
	}
	return db, nil
}

// nodeStore opens the node's records, migrating them as needed.
func (db *database) nodeStore(ctx context.Context) (nodestore.Store, error) {
	if db.pool != nil {
		return pgnode.Open(ctx, db.pool, pgnode.Options{})
	}
	return sqlitenode.Open(ctx, db.loc.Path, sqlitenode.Options{})
}

// outboxStore opens the outbox's store, migrating it as needed; stats is nil on
// PostgreSQL, which has no single writer to watch.
func (db *database) outboxStore(ctx context.Context, log zerolog.Logger) (st outboxdriver.Store, closeStore func() error, stats func() sqlitestore.Stats, err error) {
	if db.pool != nil {
		s, err := pgstore.Open(ctx, db.pool, pgstore.Options{Logger: log})
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s.Close, nil, nil
	}
	s, err := sqlitestore.Open(ctx, db.loc.Path, sqlitestore.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	return s, s.Close, s.Stats, nil
}

// close closes the pool, once the stores on it are closed.
func (db *database) close() error {
	if db == nil || db.pool == nil {
		return nil
	}
	db.pool.Close()
	return nil
}

// shared reports whether other nodes may share the database: then the calls this
// node finds active are not necessarily its own.
func (db *database) shared() bool { return db.pool != nil }
