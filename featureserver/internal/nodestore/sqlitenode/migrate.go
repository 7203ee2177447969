package sqlitenode

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// migrations are goose SQL files applied in version order; a released one is never
// edited.
//
//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the embedded schema migrations (goose SQL files), for
// `switchboard migrate`.
func Migrations() fs.FS { return migrate.Folder(migrations) }

// MigrationTable records which of Migrations a database has.
const MigrationTable = "node_migrations"

// legacyTable is where the runner before goose recorded the migrations it applied,
// by file name.
const legacyTable = "fs_schema_migrations"

// migrateDB applies the migrations db does not have (internal/migrate). A database
// the runner before goose migrated has its record carried over first, so that what
// it applied is not applied again.
func migrateDB(ctx context.Context, db *sql.DB) error {
	if err := AdoptLegacyRecord(ctx, db); err != nil {
		return fmt.Errorf("carrying over %s: %w", legacyTable, err)
	}
	_, err := migrate.Up(ctx, db, migrate.SQLite, migrate.Line{Table: MigrationTable, FS: Migrations()})
	return err
}

// AdoptLegacyRecord writes the versions of fs_schema_migrations's names
// ("migrations/0003_token_origin.sql") into the goose record, in one transaction,
// when the old table exists and the new one does not. Two processes doing it at once
// are serialized by SQLite's write lock (BEGIN IMMEDIATE): the second finds the new
// table and does nothing.
func AdoptLegacyRecord(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var legacy, current int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, legacyTable).Scan(&legacy); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, MigrationTable).Scan(&current); err != nil {
		return err
	}
	if legacy == 0 || current > 0 {
		return nil
	}
	type applied struct {
		version int64
		atMs    int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT name, applied_at FROM `+legacyTable)
	done, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (applied, error) {
		var (
			name string
			a    applied
		)
		if err := r.Scan(&name, &a.atMs); err != nil {
			return a, err
		}
		v, err := versionOf(name)
		a.version = v
		return a, err
	})
	if err != nil {
		return err
	}
	// The record table as internal/migrate writes it on SQLite: applied_at in
	// microseconds.
	if _, err := tx.ExecContext(ctx, `CREATE TABLE `+MigrationTable+` (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	for _, a := range done {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+MigrationTable+` (version, applied_at) VALUES (?, ?)`, a.version, a.atMs*1000); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// versionOf reads the version of a migration's file name: its leading digits.
func versionOf(name string) (int64, error) {
	base := path.Base(name)
	digits := base[:len(base)-len(strings.TrimLeft(base, "0123456789"))]
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("recorded migration %q has no version", name)
	}
	return v, nil
}
