package pgstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/pgpool"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the embedded schema migrations (goose SQL files), for
// `switchboard migrate`.
func Migrations() fs.FS { return migrate.Folder(migrations) }

// MigrationTable records which of Migrations a schema has.
const MigrationTable = "outbox_migrations"

// Options tune Open. Zero values take the defaults documented per field.
type Options struct {
	// Schema holds the outbox's tables. Default: the current schema of the pool's
	// connections (the first of their search_path that exists; "public" unless the
	// URL's search_path parameter or the server says otherwise). It must exist.
	Schema string
	// CallerTime makes the times in each call's parameters the reference: a claim
	// takes what is due at ClaimParams.Now and leases until LeaseUntil, the reaper
	// reaps what expired before ReapParams.Now, a publish checks holds at
	// PublishParams.Now. For tests that pin time with a manual clock (the shared
	// suite). Default false: PostgreSQL's now() decides what is due, held and
	// expired, and a lease lasts LeaseUntil minus Now from it (docs/outbox.md §5).
	CallerTime bool
	// NotifyCooldown is the least time between two wake-ups this store sends with
	// its publishes (LISTEN/NOTIFY): a publish within it after one that notified
	// does not, as river limits its insert notifications; the dispatchers woken by
	// the first claim what followed, and poll. Default 100 ms.
	NotifyCooldown time.Duration
	// ClockSync is how often Clock reads the database's time again. Default 1 min.
	ClockSync time.Duration
	// MaxConns bounds the pool OpenURL makes, unless the URL's pool_max_conns does:
	// publishes, claims and completions each hold a connection for their
	// transaction. Default 16 (pgx's own default is max(4, CPUs)).
	MaxConns int32
	// Logger receives what the store does in the background (its listener losing
	// the database and coming back). Default: the zero Logger, which discards them.
	Logger zerolog.Logger
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.NotifyCooldown == 0 {
		o.NotifyCooldown = 100 * time.Millisecond
	}
	if o.ClockSync == 0 {
		o.ClockSync = time.Minute
	}
	if o.MaxConns == 0 {
		o.MaxConns = 16
	}
	return o
}

// validate reports every value out of range at once.
func (o Options) validate() error {
	var errs []error
	if o.NotifyCooldown < 0 {
		errs = append(errs, &outboxdriver.ValidationError{Field: "Options.NotifyCooldown", Reason: "must not be negative"})
	}
	if o.MaxConns < 1 {
		errs = append(errs, &outboxdriver.ValidationError{Field: "Options.MaxConns", Reason: "must be at least 1"})
	}
	if o.ClockSync < time.Second {
		errs = append(errs, &outboxdriver.ValidationError{Field: "Options.ClockSync", Reason: "must be at least 1 s"})
	}
	if o.Schema != "" && (len(o.Schema) > 63 || strings.ContainsRune(o.Schema, 0)) {
		errs = append(errs, &outboxdriver.ValidationError{Field: "Options.Schema", Reason: "must be a PostgreSQL identifier (at most 63 bytes)"})
	}
	return errors.Join(errs...)
}

// Store is the PostgreSQL implementation of outboxdriver.Store. Any number of Stores,
// in any number of processes, may share one schema: claims, completions, the reaper
// and the purge lock rows so that none of them takes what another holds
// (docs/outbox.md §5).
type Store struct {
	pool    *pgxpool.Pool
	ownPool bool
	opts    Options
	schema  string
	// tables maps each table to its schema-qualified name: statements name tables
	// with their schema, so that they run alike in a caller's transaction whatever
	// that connection's search_path.
	tables  *strings.Replacer
	queries sync.Map // statement as written → as sent
	// channel is the LISTEN/NOTIFY channel of the schema's wake-ups.
	channel string
	clock   *dbClock
	wake    *waker
	notify  notifyLimiter
	groups  publishGroups

	stop context.CancelFunc
	bg   sync.WaitGroup
}

var (
	_ outboxdriver.Store        = (*Store)(nil)
	_ outboxdriver.Waker        = (*Store)(nil)
	_ outboxdriver.DepthCounter = (*Store)(nil)
)

// tableNames are the outbox's tables, as statements name them.
var tableNames = []string{"outbox_endpoints", "outbox_events", "outbox_deliveries", "outbox_attempts", "outbox_audit",
	"outbox_idempotency_keys", "outbox_event_types", "outbox_catalogs"}

// OpenURL connects to the database at dbURL (postgres://...; a search_path parameter
// chooses the schema) and opens the store on a pool of its own, closed by Close.
func OpenURL(ctx context.Context, dbURL string, opts Options) (*Store, error) {
	pool, err := pgpool.Connect(ctx, dbURL, opts.WithDefaults().MaxConns, "", nil)
	var badURL *pgpool.URLError
	if errors.As(err, &badURL) {
		return nil, fmt.Errorf("pgstore: %w: %w", outboxdriver.ErrInvalid, err)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	s, err := Open(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownPool = true
	return s, nil
}

// Open opens the store on pool, which the caller keeps and closes after Close (a
// program may keep its own tables in the same database, and publish in its own
// transactions: PublishTx). It applies the embedded migrations under an advisory lock,
// so that nodes starting together migrate once, reads the database's clock, and
// starts listening for wake-ups. An error leaves nothing running.
func Open(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	schema := opts.Schema
	if schema == "" {
		cur, ok, err := pgpool.CurrentSchema(ctx, pool)
		if err != nil {
			return nil, fmt.Errorf("pgstore: %w", err)
		}
		if !ok {
			return nil, fmt.Errorf("pgstore: %w: no schema of the search_path exists", outboxdriver.ErrInvalid)
		}
		schema = cur
	} else {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil {
			return nil, fmt.Errorf("pgstore: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("pgstore: %w: schema %q does not exist", outboxdriver.ErrInvalid, schema)
		}
	}
	if err := migrateSchema(ctx, pool, schema); err != nil {
		return nil, err
	}
	pairs := make([]string, 0, 2*len(tableNames))
	for _, t := range tableNames {
		pairs = append(pairs, t, pgx.Identifier{schema, t}.Sanitize())
	}
	s := &Store{pool: pool, opts: opts, schema: schema, tables: strings.NewReplacer(pairs...),
		channel: channelOf(schema)}
	s.notify.cooldown = opts.NotifyCooldown
	clock, err := readClock(ctx, pool)
	if err != nil {
		return nil, err
	}
	s.clock = clock
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wake = newWaker()
	s.bg.Add(2)
	go func() { defer s.bg.Done(); s.listen(bg) }()
	go func() { defer s.bg.Done(); s.syncClock(bg) }()
	return s, nil
}

// migrateSchema applies the migrations in schema, on connections of their own whose
// search_path is that schema.
func migrateSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if err := pgpool.Migrate(ctx, pool, schema, migrate.Line{Table: MigrationTable, FS: Migrations()}); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// Pool returns the store's connection pool: begin transactions on it (or on any pool
// of the same database) for the outbox's PublishTx.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema that holds the outbox's tables.
func (s *Store) Schema() string { return s.schema }

// Close stops the listener and the clock's updates, and closes the pool when OpenURL
// made it. It is safe to call twice.
func (s *Store) Close() error {
	s.stop()
	s.bg.Wait()
	if s.ownPool {
		s.ownPool = false
		s.pool.Close()
	}
	return nil
}

// q returns query with its tables qualified by the store's schema.
func (s *Store) q(query string) string {
	if v, ok := s.queries.Load(query); ok {
		return v.(string)
	}
	out := s.tables.Replace(query)
	s.queries.Store(query, out)
	return out
}

// now is the time parameter of a statement: coalesce($n::timestamptz, now()) reads
// it, so that NULL (the default) takes the database's clock and CallerTime the
// caller's.
func (s *Store) now(t time.Time) *time.Time {
	if s.opts.CallerTime {
		return &t
	}
	return nil
}

// write runs fn in a transaction of the store's own, committed when fn returns nil.
// A transaction PostgreSQL aborts to break a deadlock, or a serialization failure,
// is run again (twice at most): decisions are functions of the rows they read.
func (s *Store) write(ctx context.Context, fn func(q querier) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(pgxQuerier{tx}) })
		if !retryable(err) {
			return err
		}
	}
	return err
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// read is the pool, for statements outside a transaction.
func (s *Store) read() querier { return pgxQuerier{s.pool} }

func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %s", outboxdriver.ErrNotFound, what, id)
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows) }

// one is the row of a single-row query, read by scan; no row is ErrNotFound, naming
// what of that id.
func one[T any](r sqlrows.Row, scan func(sqlrows.Row) (T, error), what, id string) (T, error) {
	v, err := scan(r)
	if isNoRows(err) {
		return v, notFound(what, id)
	}
	return v, err
}
