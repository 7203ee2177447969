package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/sqlitefile"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune Open. Zero values take the defaults documented per field.
type Options struct {
	// BusyTimeout is how long a writer waits for another process's write lock.
	// Default 10 s.
	BusyTimeout time.Duration
	// Synchronous is the SQLite synchronous pragma: "FULL" (default) syncs the WAL on
	// every commit, so a published event survives power loss; "NORMAL" survives a
	// process crash only and is faster.
	Synchronous string
	// MaxOpenConns bounds the connection pool. Default 8.
	MaxOpenConns int
	// OnWrite, when set, is told the outcome of every write through the single
	// writer (the outbox's and WriteTx's), with the writer's context: a program
	// watching whether the file can be written (a full disk, a read-only file) sees
	// the first failure of any write. changed tells a write that succeeded and
	// changed rows from one that changed nothing (a claim that found no work), which
	// proves nothing about a file that can no longer grow. It runs on the writer's
	// caller and must not block. Default none.
	OnWrite func(ctx context.Context, changed bool, err error)
}

// Store is the SQLite implementation of outboxdriver.Store: one database file in WAL mode.
// It is safe for concurrent use by one process; several processes may share the file
// (SQLite's lock serializes their writes).
type Store struct {
	// db serves reads, migrations and callers' transactions (DB).
	db    *sql.DB
	reads stmtCache
	// writer is the one connection the group commits write on: its page cache stays
	// valid from one transaction to the next, where a pooled connection would read
	// back the pages other connections wrote.
	writer  *sql.DB
	writes  stmtCache
	commits groupCommit
	onWrite func(ctx context.Context, changed bool, err error) // Options.OnWrite
	// endpointRows are the endpoint rows claims read, by version.
	endpointRows endpointRows
}

// stmtCache caches prepared statements of one handle by query text: parsing SQL
// dominates the cost of the small statements the outbox runs.
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// oneConn: the handle has one connection, which a transaction holds; a statement
	// first met inside one is prepared on the transaction and cached after it (later).
	oneConn bool
	later   []string
}

func newStmtCache(db *sql.DB, oneConn bool) stmtCache {
	return stmtCache{db: db, stmts: map[string]*sql.Stmt{}, oneConn: oneConn}
}

// prepareLater caches the statements met inside the transaction that just ended.
func (c *stmtCache) prepareLater(ctx context.Context) {
	c.mu.Lock()
	queries := c.later
	c.later = nil
	c.mu.Unlock()
	for _, q := range queries {
		if _, err := (conn{cache: c}).stmt(ctx, q); err != nil {
			return // prepared again on next use; the error shows there
		}
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		_ = st.Close()
	}
	clear(c.stmts)
}

var (
	_ outboxdriver.Store        = (*Store)(nil)
	_ outboxdriver.DepthCounter = (*Store)(nil)
)

// Open opens (creating when missing, mode 0600) the database file at path and applies
// the embedded migrations. ":memory:" is refused: the outbox is durable by definition.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("sqlitestore: %w: a database file path is required", outboxdriver.ErrInvalid)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	switch opts.Synchronous = strings.ToUpper(opts.Synchronous); opts.Synchronous {
	case "":
		opts.Synchronous = "FULL"
	case "FULL", "NORMAL":
	default:
		return nil, fmt.Errorf("sqlitestore: %w: Synchronous must be FULL or NORMAL, got %q", outboxdriver.ErrInvalid, opts.Synchronous)
	}
	if opts.MaxOpenConns <= 0 {
		opts.MaxOpenConns = 8
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+opts.Synchronous+")")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Set("_txlock", "immediate") // writers take the lock at BEGIN: no upgrade deadlocks
	// The file is created here, readable by its owner only (it holds endpoint
	// secrets), and in WAL mode; every connection opens it as it is: one opened after
	// the file was deleted fails instead of starting a fresh, empty database.
	if err := sqlitefile.Prepare(ctx, path, opts.BusyTimeout); err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	q.Set("mode", "rw")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(opts.MaxOpenConns)
	db.SetMaxIdleConns(opts.MaxOpenConns)
	s := &Store{db: db, reads: newStmtCache(db, false), onWrite: opts.OnWrite}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	// The writer's page cache holds the hot ends of the indexes; 16 MiB.
	q.Add("_pragma", "cache_size(-16384)")
	writer, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	s.writer, s.writes = writer, newStmtCache(writer, true)
	return s, nil
}

// DB returns the database handle: begin transactions on it for the outbox's PublishTx, and
// keep the program's own tables in the same file.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the database.
func (s *Store) Close() error {
	s.reads.close()
	s.writes.close()
	return errors.Join(s.writer.Close(), s.db.Close())
}

// migrate applies the embedded migrations the file does not have (internal/migrate):
// each in a transaction that takes the write lock at BEGIN (_txlock=immediate), so a
// process opening the same file at the same time waits and then finds nothing to do.
// A file migrated by the runner before goose is read as it is: its outbox_migrations
// table is the record goose keeps.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := migrate.Up(ctx, s.db, migrate.SQLite, migrate.Line{Table: MigrationTable, FS: Migrations()}); err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	return nil
}

// Migrations returns the embedded schema migrations (goose SQL files), for
// `switchboard migrate`.
func Migrations() fs.FS { return migrate.Folder(migrations) }

// MigrationTable records which of Migrations a database has.
const MigrationTable = "outbox_migrations"

func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %s", outboxdriver.ErrNotFound, what, id)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// one is the row of a single-row query, read by scan; no row is ErrNotFound, naming
// what of that id.
func one[T any](r sqlrows.Row, scan func(sqlrows.Row) (T, error), what, id string) (T, error) {
	v, err := scan(r)
	if isNoRows(err) {
		return v, notFound(what, id)
	}
	return v, err
}
