package sqlitenode

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

// migrations are applied in name order; a released one is never edited.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies, in name order, the embedded migrations not applied yet, each in a
// transaction with its record in fs_schema_migrations.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS fs_schema_migrations (
		name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		if err := s.applyMigration(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

func (s *Store) applyMigration(ctx context.Context, name string) error {
	script, err := migrations.ReadFile(name)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM fs_schema_migrations WHERE name = ?`, name).Scan(&applied); err != nil {
		return err
	}
	if applied > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(script)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO fs_schema_migrations(name, applied_at) VALUES (?, ?)`, name, s.clock.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}
