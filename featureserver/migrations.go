package featureserver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/outbox/pgstore"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// MigrationReport is what Migrate found (and applied) in a node's database: the
// output of `switchboard migrate status|up --json`, a contract scripts read.
type MigrationReport struct {
	Database   string          `json:"database"`
	Migrations []MigrationLine `json:"migrations"`
	// Applied is what Migrate applied (versions), empty when it only read.
	Applied []int64 `json:"applied"`
}

// MigrationLine is one migration of a node's database and whether it is applied.
type MigrationLine struct {
	Line      string     `json:"line"`
	Version   int64      `json:"version"`
	Name      string     `json:"name"`
	Applied   bool       `json:"applied"`
	AppliedAt *time.Time `json:"applied_at"`
}

// migrationLine is one line of migrations of a node's database, with what must run
// before Up applies it.
type migrationLine struct {
	migrate.Line
	// prepare, when set, runs before Up (the node's SQLite store carries over the
	// record of its runner before goose).
	prepare func(context.Context, *sql.DB) error
}

// migrationLines are the migrations a node's database holds, per driver: the
// outbox's and the node store's.
func migrationLines(driver string) (migrate.Dialect, []migrationLine) {
	if driver == dburl.Postgres {
		return migrate.Postgres, []migrationLine{
			{Line: migrate.Line{Table: pgstore.MigrationTable, FS: pgstore.Migrations()}},
			{Line: migrate.Line{Table: pgnode.MigrationTable, FS: pgnode.Migrations()}},
		}
	}
	return migrate.SQLite, []migrationLine{
		{Line: migrate.Line{Table: sqlitestore.MigrationTable, FS: sqlitestore.Migrations()}},
		{Line: migrate.Line{Table: sqlitenode.MigrationTable, FS: sqlitenode.Migrations()}, prepare: sqlitenode.AdoptLegacyRecord},
	}
}

// openMigrationDB opens loc for migrating: for SQLite with the stores' write lock at
// BEGIN and busy timeout, so that it waits for a node writing the file.
func openMigrationDB(loc dburl.Location, create bool) (*sql.DB, string, error) {
	if loc.Driver == dburl.Postgres {
		db, err := sql.Open("pgx", loc.URL)
		return db, "postgres", err
	}
	if !create {
		if _, err := os.Stat(loc.Path); err != nil {
			return nil, "", fmt.Errorf("no SQLite database at %s: %w", loc.Path, err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+loc.Path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	return db, "sqlite:" + loc.Path, err
}

// Migrate lists every migration of the node's database at loc (the outbox's and the
// node store's) and, with apply, first applies those it lacks, in order and each in
// its own transaction (on PostgreSQL under an advisory lock, so nodes starting
// meanwhile wait and find nothing to do). Without apply a missing SQLite file is an
// error rather than created.
func Migrate(ctx context.Context, loc dburl.Location, apply bool) (MigrationReport, error) {
	report := MigrationReport{Migrations: []MigrationLine{}, Applied: []int64{}}
	db, name, err := openMigrationDB(loc, apply)
	if err != nil {
		return report, err
	}
	defer db.Close()
	report.Database = name
	if err := db.PingContext(ctx); err != nil {
		return report, fmt.Errorf("%s: %w", name, err)
	}
	dialect, lines := migrationLines(loc.Driver)
	for _, line := range lines {
		if apply {
			if line.prepare != nil {
				if err := line.prepare(ctx, db); err != nil {
					return report, fmt.Errorf("%s: %w", line.Table, err)
				}
			}
			applied, err := migrate.Up(ctx, db, dialect, line.Line)
			if err != nil {
				return report, err
			}
			for _, a := range applied {
				report.Applied = append(report.Applied, a.Version)
			}
		}
		versions, err := migrate.List(ctx, db, dialect, line.Line)
		if err != nil {
			return report, err
		}
		for _, v := range versions {
			m := MigrationLine{Line: line.Table, Version: v.Version, Name: v.Name, Applied: v.Applied}
			if v.Applied {
				at := v.AppliedAt
				m.AppliedAt = &at
			}
			report.Migrations = append(report.Migrations, m)
		}
	}
	return report, nil
}
