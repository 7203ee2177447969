package sqlitenode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	_ "modernc.org/sqlite" // the embedded default database

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/internal/sqlitefile"
	"github.com/switchboard-voice/switchboard/retry"
)

// Options configure a Store. Zero values take the defaults documented per field.
type Options struct {
	// Clock is the store's reference for node leases (LeaseNode). Default the wall
	// clock.
	Clock retry.Clock
	// Writer, when set, runs every write transaction of the store: the outbox's
	// single writer on the same file (*sqlitestore.Store), so that the file has one
	// writer and the node's writes share its group commits instead of competing for
	// SQLite's lock (docs/outbox.md §5). Default: a writer connection of the store's
	// own.
	Writer Writer
	// Secrets seals the secrets the store keeps (nodestore.SealAccount and the
	// others) and opens them when read. Default nil: kept in clear, and a sealed one
	// cannot be read.
	Secrets *secretbox.Keyring
}

// Writer runs write transactions on one connection of the database file: fn runs in
// a transaction (or a savepoint of one shared with other writes) that commits once
// fn returns nil and leaves nothing of fn's writes when it returns an error.
// *sqlitestore.Store implements it.
type Writer interface {
	WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error
}

// ownWriter is the default Writer: one connection, one transaction per write.
type ownWriter struct{ db *sql.DB }

func (w ownWriter) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
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
	db     *sql.DB // reads and migrations
	writer Writer
	own    *sql.DB // the writer's connection when it is the store's own
	clock  retry.Clock
	box    *secretbox.Keyring // Options.Secrets
}

var _ nodestore.Store = (*Store)(nil)

// busyTimeout is how long a write waits for another connection's lock on the file,
// and how long Open waits for another process switching a new file to WAL.
const busyTimeout = 10 * time.Second

// Open opens the database file at path, creating it (mode 0600: it holds secrets)
// when it does not exist, and applies the migrations it has not had yet
// (internal/migrate). Its connections open the file as it is and never create it
// again: a file deleted under a running store makes its reads fail rather than start
// a fresh, empty database. On error nothing is left open; a migration that fails is
// rolled back and named. ctx bounds the migration.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(path); err != nil {
		return nil, err
	}
	if err := sqlitefile.Prepare(ctx, path, busyTimeout); err != nil {
		return nil, err
	}
	dsn := fmt.Sprintf("file:%s?mode=rw&_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate", path, busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, writer: opts.Writer, clock: opts.Clock, box: opts.Secrets}
	if err := migrateDB(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	if s.writer == nil {
		own, err := sql.Open("sqlite", dsn)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		// One connection, kept for the store's life: writes queue for it here
		// rather than poll SQLite's lock.
		own.SetMaxOpenConns(1)
		own.SetMaxIdleConns(1)
		own.SetConnMaxIdleTime(0)
		own.SetConnMaxLifetime(0)
		s.own, s.writer = own, ownWriter{own}
	}
	return s, nil
}

// write runs fn in a write transaction of the store's writer.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.writer.WriteTx(ctx, fn)
}

// exec runs one writing statement.
func (s *Store) exec(ctx context.Context, query string, args ...any) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database (not a Writer given in Options: its owner closes it).
func (s *Store) Close() error {
	var err error
	if s.own != nil {
		err = s.own.Close()
	}
	return errors.Join(err, s.db.Close())
}

// CheckWritable commits a write transaction that rewrites one row as it is (a
// migration's record in MigrationTable), through the store's writer: it fails as the store's writes
// would while the file cannot be written (read-only, an I/O error, gone).
func (s *Store) CheckWritable(ctx context.Context) error {
	return s.exec(ctx, `UPDATE `+MigrationTable+` SET applied_at = applied_at WHERE version = (SELECT min(version) FROM `+MigrationTable+`)`)
}

// deleteRows runs a DELETE statement; one that deletes nothing is ErrNotFound.
func deleteRows(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return nodestore.ErrNotFound
	}
	return nil
}
