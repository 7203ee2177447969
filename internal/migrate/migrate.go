package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

// Dialect is the SQL of a database: how the record table is written and locked.
type Dialect int

// Dialects.
const (
	SQLite Dialect = iota + 1
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "dialect(" + strconv.Itoa(int(d)) + ")"
}

// Line is one set of migrations: goose SQL files (NNNN_name.sql, "-- +goose Up") at
// the root of FS, recorded in Table.
type Line struct {
	// Table records the applied versions, e.g. "outbox_migrations".
	Table string
	FS    fs.FS
}

// Folder is the migrations/ folder of fsys (a store's embedded migrations/*.sql),
// the root a Line's FS wants.
func Folder(fsys fs.FS) fs.FS {
	sub, err := fs.Sub(fsys, "migrations")
	if err != nil {
		panic(err) // the embedded folder exists: a build that lost it cannot run
	}
	return sub
}

// tableName is what a record table may be called: it is written into SQL.
var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func (l Line) check() error {
	if !tableName.MatchString(l.Table) {
		return fmt.Errorf("migrate: table name %q: want lower-case letters, digits and _", l.Table)
	}
	if l.FS == nil {
		return errors.New("migrate: no migrations")
	}
	return nil
}

func (l Line) provider(db *sql.DB, d Dialect) (*goose.Provider, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithStore(newRecord(d, l.Table)), goose.WithDisableGlobalRegistry(true)}
	if d == Postgres {
		opts = append(opts, goose.WithSessionLocker(advisoryLock{table: l.Table}))
	}
	return goose.NewProvider(goose.DialectCustom, db, l.FS, opts...)
}

// Applied is one migration Up applied.
type Applied struct {
	Version  int64
	Name     string
	Duration time.Duration
}

// Up applies every migration of line that db does not have, each in its own
// transaction, and returns those it applied (none when another process had). On
// PostgreSQL it waits for the line's advisory lock first, as long as ctx allows. On
// failure the migration that failed is rolled back and the error names it; those
// before it stay applied.
func Up(ctx context.Context, db *sql.DB, d Dialect, line Line) ([]Applied, error) {
	p, err := line.provider(db, d)
	if err != nil {
		return nil, err
	}
	var out []Applied
	for {
		before, verr := p.GetDBVersion(ctx)
		results, err := p.Up(ctx)
		var partial *goose.PartialError
		if errors.As(err, &partial) {
			results = partial.Applied // those before the failure stay applied
		}
		mine := 0
		for _, r := range results {
			if r.Error == nil {
				out = append(out, Applied{Version: r.Source.Version, Name: path.Base(r.Source.Path), Duration: r.Duration})
				mine++
			}
		}
		if err == nil {
			return out, nil
		}
		// On SQLite another process may have applied the same version first: its
		// transaction won the write lock, ours failed on what it created and rolled
		// back whole. While the record moves on (someone migrates beside us), Up is
		// tried again from where it now stands; a failure with no progress anywhere
		// is the migration's own: the record moved by no more than this turn's own
		// migrations. The loop ends: every turn the version grows.
		if d != SQLite || verr != nil {
			return out, fmt.Errorf("migrate %s: %w", line.Table, err)
		}
		after, aerr := p.GetDBVersion(ctx)
		if aerr != nil || after-before <= int64(mine) {
			return out, fmt.Errorf("migrate %s: %w", line.Table, err)
		}
		if pending, perr := p.HasPending(ctx); perr == nil && !pending {
			return out, nil
		}
	}
}

// Version is one migration of a line and whether a database has it.
type Version struct {
	Version int64
	Name    string
	Applied bool
	// AppliedAt is when it was applied; zero when it is not.
	AppliedAt time.Time
}

// List returns every migration of line, oldest first, with whether db has it. It only
// reads: a database without the record table has none applied.
func List(ctx context.Context, db *sql.DB, d Dialect, line Line) ([]Version, error) {
	p, err := line.provider(db, d)
	if err != nil {
		return nil, err
	}
	rec := newRecord(d, line.Table)
	exists, err := rec.TableExists(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", line.Table, err)
	}
	applied := map[int64]time.Time{}
	if exists {
		if applied, err = rec.appliedAt(ctx, db); err != nil {
			return nil, fmt.Errorf("migrate %s: %w", line.Table, err)
		}
	}
	var out []Version
	for _, s := range p.ListSources() {
		at, ok := applied[s.Version]
		out = append(out, Version{Version: s.Version, Name: strings.TrimSuffix(path.Base(s.Path), ".sql"), Applied: ok, AppliedAt: at})
	}
	return out, nil
}
