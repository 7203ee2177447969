package sqlitenode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "modernc.org/sqlite" // the embedded default database

	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/retry"
)

// Options configure a Store. Zero values take the defaults documented per field.
type Options struct {
	// Clock is the store's reference for node leases (LeaseNode). Default the wall
	// clock.
	Clock retry.Clock
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	return o
}

// validate reports every bad value at once. Options have none yet beyond the path,
// which Open checks.
func (o Options) validate(path string) error {
	var errs []error
	if path == "" {
		errs = append(errs, errors.New("sqlitenode: the database path is empty"))
	}
	return errors.Join(errs...)
}

// Store is the SQLite nodestore.Store.
type Store struct {
	db    *sql.DB
	clock retry.Clock
}

var _ nodestore.Store = (*Store)(nil)

// Open opens the database file at path, creating it when it does not exist, and
// applies the migrations it has not had yet (internal/migrate). On error nothing is
// left open; a migration that fails is rolled back and named. ctx bounds the
// migration.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(path); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, clock: opts.Clock}
	if err := migrateDB(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	return s, nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }
