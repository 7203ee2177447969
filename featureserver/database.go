package featureserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/pgpool"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
	"github.com/switchboard-voice/switchboard/internal/sqlitefile"
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

	// health says whether the database takes writes, for /readyz and new calls.
	health *dbHealth
	// secrets seals the secrets the stores keep (Config.SecretsKey); nil: in clear.
	secrets *secretbox.Keyring

	// SQLite only: the lock that keeps a second node off the file, and the outbox's
	// store, opened first since its single writer runs every write of the node's
	// store too (one writer per file).
	lock    *databaseLock
	sqlite  *sqlitestore.Store
	ownsOut bool // the outbox's store is still the database's to close
}

// openDatabase connects to loc (PostgreSQL), or (SQLite) locks the file, creates it
// (mode 0600) when missing, checks it can be written and opens the outbox's store on
// it. On error nothing is left open.
func openDatabase(ctx context.Context, loc dburl.Location) (*database, error) {
	db := &database{loc: loc}
	if loc.Driver != dburl.Postgres {
		if err := db.openSQLite(ctx); err != nil {
			db.close()
			return nil, err
		}
		return db, nil
	}
	// The probe comes with the node's store; every statement of the pool tells
	// the health from now on (pgWrites).
	db.health = newDBHealth(nil, postgresFault)
	var err error
	db.pool, err = pgpool.Connect(ctx, loc.URL, poolConns, "switchboard-node", pgWrites{db.health})
	var badURL *pgpool.URLError
	if errors.As(err, &badURL) {
		return nil, &ConfigError{Name: EnvDatabaseURL, Value: dburl.Redact(loc.URL), Accept: "a PostgreSQL connection URL"}
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", dburl.Redact(loc.URL), err)
	}
	if err := db.pool.Ping(ctx); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL at %s: %w", dburl.Redact(loc.URL), err)
	}
	return db, nil
}

// openSQLite opens the node's SQLite file: the lock before anything touches it (a
// second node on the file stops here), then the file (created 0600 when missing),
// which must be writable (SQLite would otherwise open it read-only, and every write
// would fail later), then the outbox's store, whose single writer the node's store
// writes through (docs/outbox.md §5).
func (db *database) openSQLite(ctx context.Context) error {
	path := db.loc.Path
	var err error
	if db.lock, err = lockDatabase(path); err != nil {
		return err
	}
	if err := sqlitefile.Create(path); err != nil {
		return err
	}
	if err := writable(path); err != nil {
		return err
	}
	db.health = newDBHealth(nil, sqliteFault) // its probe comes with the node's store
	if db.health.files, err = sqliteFiles(path); err != nil {
		return err
	}
	// Every write through the file's single writer that fails tells the health: a
	// publish on a full disk shows at once. A write that succeeds ends a failure only
	// if it changed rows, as on PostgreSQL (pgWrites): a claim that found no work
	// proves nothing about a file that can no longer grow (docs/outbox.md §5).
	onWrite := func(ctx context.Context, changed bool, err error) {
		if err != nil || changed {
			db.health.noteWrite(ctx, err)
		}
	}
	if db.sqlite, err = sqlitestore.Open(ctx, path, sqlitestore.Options{OnWrite: onWrite}); err != nil {
		return fmt.Errorf("outbox store: %w", err)
	}
	db.ownsOut = true
	return nil
}

// nodeStore opens the node's records, migrating them as needed. On SQLite they are
// written through the outbox store's writer (watched by the file's health), and the
// file must take a write now.
func (db *database) nodeStore(ctx context.Context) (nodestore.Store, error) {
	if db.pool != nil {
		ps, err := pgnode.Open(ctx, db.pool, pgnode.Options{Secrets: db.secrets})
		if err != nil {
			return nil, err
		}
		db.health.probe = ps.CheckWritable
		return ps, nil
	}
	ns, err := sqlitenode.Open(ctx, db.loc.Path, sqlitenode.Options{Writer: db.sqlite, Secrets: db.secrets})
	if err != nil {
		return nil, err
	}
	db.health.probe = ns.CheckWritable
	if err := ns.CheckWritable(ctx); err != nil {
		ns.Close()
		return nil, fmt.Errorf("the database %s cannot be written: %w", db.loc.Path, err)
	}
	return ns, nil
}

// outboxStore opens the outbox's store, migrating it as needed (on SQLite: hands
// over the one openDatabase opened; closeStore then closes it, which must come after
// the node's store, writing through it, closed); watch is what /metrics reads of it.
func (db *database) outboxStore(ctx context.Context, log zerolog.Logger) (st outboxdriver.Store, closeStore func() error, watch outboxWatch, err error) {
	if db.pool != nil {
		s, err := pgstore.Open(ctx, db.pool, pgstore.Options{Logger: log})
		if err != nil {
			return nil, nil, outboxWatch{}, err
		}
		return s, s.Close, outboxWatch{depth: s.QueueDepth}, nil
	}
	db.ownsOut = false
	return db.sqlite, db.sqlite.Close, outboxWatch{stats: db.sqlite.Stats, depth: db.sqlite.QueueDepth}, nil
}

// outboxWatch is what /metrics reads of the outbox's store: the single writer's
// counters (SQLite only: PostgreSQL has no single writer to watch) and the queue's
// depth, read at each scrape.
type outboxWatch struct {
	stats func() sqlitestore.Stats
	depth func(ctx context.Context, now time.Time) (outboxdriver.QueueDepth, error)
}

// ready returns why the database cannot take the node's writes, as the last probe
// and the writes since found (dbHealth.ready), or nil.
func (db *database) ready() error { return db.health.ready() }

// admit returns why a new call may not start, or nil (dbHealth.admit).
func (db *database) admit() error { return db.health.admit() }

// close closes what the database still holds (the pool, once the stores on it are
// closed; on SQLite the outbox's store when it was never handed over) and releases
// the SQLite file's lock last. It takes a nil or half-opened database.
func (db *database) close() error {
	if db == nil {
		return nil
	}
	defer db.lock.release()
	if db.pool != nil {
		db.pool.Close()
	}
	if db.ownsOut && db.sqlite != nil {
		db.ownsOut = false
		return db.sqlite.Close()
	}
	return nil
}

// shared reports whether other nodes may share the database: then the calls this
// node finds active are not necessarily its own.
func (db *database) shared() bool { return db != nil && db.pool != nil }
