package pgnode

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/pgpool"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the embedded schema migrations (goose SQL files), for
// `switchboard migrate`.
func Migrations() fs.FS { return migrate.Folder(migrations) }

// MigrationTable records which of Migrations a schema has.
const MigrationTable = "node_migrations"

// Options tune Open and OpenURL. Zero values take the defaults documented per field.
type Options struct {
	// MaxConns bounds the pool OpenURL makes, unless the URL's pool_max_conns does.
	// Default 8.
	MaxConns int32
	// Secrets seals the secrets the store keeps (nodestore.SealAccount and the
	// others) and opens them when read. Default nil: kept in clear, and a sealed one
	// cannot be read.
	Secrets *secretbox.Keyring
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.MaxConns == 0 {
		o.MaxConns = 8
	}
	return o
}

func (o Options) validate() error {
	if o.MaxConns < 1 {
		return errors.New("pgnode: Options.MaxConns must be at least 1")
	}
	return nil
}

// Store is the PostgreSQL nodestore.Store. Any number of Stores, in any number of
// processes, may share one schema.
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	box     *secretbox.Keyring // Options.Secrets
}

var _ nodestore.Store = (*Store)(nil)

// OpenURL connects to the database at dbURL (postgres://...; a search_path parameter
// chooses the schema) and opens the store on a pool of its own, closed by Close.
func OpenURL(ctx context.Context, dbURL string, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	pool, err := pgpool.Connect(ctx, dbURL, opts.MaxConns, "", nil)
	if err != nil {
		return nil, fmt.Errorf("pgnode: %w", err)
	}
	s, err := Open(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// Open opens the store on pool, whose connections' search_path names the schema of
// the node's tables; the caller keeps the pool and closes it after Close. It applies
// the embedded migrations under an advisory lock (internal/migrate), so that nodes
// starting together migrate once.
func Open(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	schema, ok, err := pgpool.CurrentSchema(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("pgnode: %w", err)
	}
	if !ok {
		return nil, errors.New("pgnode: no schema of the connections' search_path exists")
	}
	if err := pgpool.Migrate(ctx, pool, schema, migrate.Line{Table: MigrationTable, FS: Migrations()}); err != nil {
		return nil, fmt.Errorf("pgnode: %w", err)
	}
	return &Store{pool: pool, box: opts.Secrets}, nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Close closes the pool when OpenURL made it. It is safe to call twice.
func (s *Store) Close() error {
	if s.ownPool {
		s.ownPool = false
		s.pool.Close()
	}
	return nil
}

// ms is t as stored: UTC, at millisecond precision (the contract's, and SQLite's).
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nodestore.ErrNotFound
	}
	return err
}

// deleteRows runs a DELETE statement on db (the pool or a transaction); one that
// deletes nothing is ErrNotFound.
func deleteRows(ctx context.Context, db interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, query string, args ...any) error {
	tag, err := db.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nodestore.ErrNotFound
	}
	return nil
}

// CheckWritable commits a write transaction that rewrites one row as it is (a
// migration's record): it fails as the store's writes would on a server that
// refuses writes (a read-only standby after a failover, a full disk) or is gone.
func (s *Store) CheckWritable(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `UPDATE `+MigrationTable+` SET applied_at = applied_at WHERE version = (SELECT min(version) FROM `+MigrationTable+`)`)
	return err
}
