package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pressly/goose/v3/database"
)

// record is goose's database.Store over a line's own table: version (primary key)
// and applied_at. Goose keeps a version 0 for "the table exists"; here it is implied
// by the table, not stored, so that the table holds what the hand-written runner
// wrote: real versions only.
type record struct {
	d     Dialect
	table string
}

var _ database.StoreExtender = record{}

func newRecord(d Dialect, table string) record { return record{d: d, table: table} }

func (r record) Tablename() string { return r.table }

func (r record) CreateVersionTable(ctx context.Context, db database.DBTxConn) error {
	q := `CREATE TABLE IF NOT EXISTS ` + r.table + ` (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`
	if r.d == Postgres {
		q = `CREATE TABLE IF NOT EXISTS ` + r.table + ` (version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
	}
	_, err := db.ExecContext(ctx, q)
	return err
}

func (r record) Insert(ctx context.Context, db database.DBTxConn, req database.InsertRequest) error {
	if req.Version == 0 {
		return nil // implied by the table
	}
	var err error
	if r.d == Postgres {
		_, err = db.ExecContext(ctx, `INSERT INTO `+r.table+` (version) VALUES ($1)`, req.Version)
	} else {
		// Microseconds, as the runner before goose wrote them.
		_, err = db.ExecContext(ctx, `INSERT INTO `+r.table+` (version, applied_at) VALUES (?, ?)`, req.Version, time.Now().UnixMicro())
	}
	return err
}

func (r record) Delete(ctx context.Context, db database.DBTxConn, version int64) error {
	_, err := db.ExecContext(ctx, `DELETE FROM `+r.table+` WHERE version = `+r.param(1), version)
	return err
}

func (r record) param(n int) string {
	if r.d == Postgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

func (r record) GetMigration(ctx context.Context, db database.DBTxConn, version int64) (*database.GetMigrationResult, error) {
	if version == 0 {
		return &database.GetMigrationResult{IsApplied: true}, nil
	}
	at, ok, err := r.get(ctx, db, version)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %d", database.ErrVersionNotFound, version)
	}
	return &database.GetMigrationResult{Timestamp: at, IsApplied: true}, nil
}

func (r record) get(ctx context.Context, db database.DBTxConn, version int64) (time.Time, bool, error) {
	row := db.QueryRowContext(ctx, `SELECT applied_at FROM `+r.table+` WHERE version = `+r.param(1), version)
	at, err := r.scanTime(row)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return at, err == nil, err
}

func (r record) scanTime(row interface{ Scan(...any) error }) (time.Time, error) {
	if r.d == Postgres {
		var t time.Time
		err := row.Scan(&t)
		return t.UTC(), err
	}
	var us int64
	err := row.Scan(&us)
	return time.UnixMicro(us).UTC(), err
}

func (r record) GetLatestVersion(ctx context.Context, db database.DBTxConn) (int64, error) {
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM `+r.table).Scan(&v); err != nil {
		return -1, err
	}
	return v.Int64, nil
}

// ListMigrations lists the applied versions newest first, ending with the implied 0.
func (r record) ListMigrations(ctx context.Context, db database.DBTxConn) ([]*database.ListMigrationsResult, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM `+r.table+` ORDER BY version DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*database.ListMigrationsResult
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, &database.ListMigrationsResult{Version: v, IsApplied: true})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return append(out, &database.ListMigrationsResult{Version: 0, IsApplied: true}), nil
}

func (r record) TableExists(ctx context.Context, db database.DBTxConn) (bool, error) {
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if r.d == Postgres {
		q = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1`
	}
	var n int
	if err := db.QueryRowContext(ctx, q, r.table).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// appliedAt maps every applied version to when it was applied.
func (r record) appliedAt(ctx context.Context, db database.DBTxConn) (map[int64]time.Time, error) {
	rows, err := db.QueryContext(ctx, `SELECT version, applied_at FROM `+r.table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var (
			v  int64
			at time.Time
			us int64
		)
		if r.d == Postgres {
			err = rows.Scan(&v, &at)
		} else {
			err = rows.Scan(&v, &us)
			at = time.UnixMicro(us)
		}
		if err != nil {
			return nil, err
		}
		out[v] = at.UTC()
	}
	return out, rows.Err()
}
