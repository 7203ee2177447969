package migrate_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"

	"github.com/switchboard-voice/switchboard/internal/migrate"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// line is two migrations, the second a row: applied twice, it would leave two rows.
func line() migrate.Line {
	return migrate.Line{Table: "demo_migrations", FS: fstest.MapFS{
		"0001_table.sql": {Data: []byte("-- +goose Up\nCREATE TABLE demo (n integer NOT NULL);\n")},
		"0002_row.sql":   {Data: []byte("-- +goose Up\nINSERT INTO demo (n) VALUES (1);\n")},
	}}
}

// concurrentUp runs Up from n goroutines at once, each on its own pool (as processes
// would), and checks that every migration ran once and no Up failed.
func concurrentUp(t *testing.T, d migrate.Dialect, open func() *sql.DB) {
	ctx := context.Background()
	const n = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied int
	)
	dbs := make([]*sql.DB, n)
	for i := range n {
		dbs[i] = open()
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := migrate.Up(ctx, dbs[i], d, line())
			if err != nil {
				t.Errorf("Up %d: %v", i, err)
			}
			mu.Lock()
			applied += len(got)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var rows int
	if err := dbs[0].QueryRow(`SELECT count(*) FROM demo`).Scan(&rows); err != nil || rows != 1 || applied != 2 {
		t.Fatalf("%d rows (%v), %d migrations applied in all; want 1 and 2", rows, err, applied)
	}
	vs, err := migrate.List(ctx, dbs[0], d, line())
	if err != nil || len(vs) != 2 || !vs[0].Applied || !vs[1].Applied || vs[0].Name != "0001_table" || vs[1].AppliedAt.IsZero() {
		t.Fatalf("List: %+v %v", vs, err)
	}
}

func TestUpConcurrentSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.db")
	concurrentUp(t, migrate.SQLite, func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

// TestUpConcurrentPostgres: goroutines migrating one empty schema at once: the
// advisory lock lets one migrate, the others find nothing to do.
func TestUpConcurrentPostgres(t *testing.T) {
	u, _ := pgtest.Schema(t)
	concurrentUp(t, migrate.Postgres, func() *sql.DB {
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

// TestListReadsOnly: List on a database never migrated reports every migration
// pending and creates nothing; after Up, applied.
func TestListReadsOnly(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vs, err := migrate.List(ctx, db, migrate.SQLite, line())
	if err != nil || len(vs) != 2 || vs[0].Applied || vs[1].Applied {
		t.Fatalf("List before Up: %+v %v", vs, err)
	}
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("List created %d tables (%v)", tables, err)
	}
	if got, err := migrate.Up(ctx, db, migrate.SQLite, line()); err != nil || len(got) != 2 || got[0].Version != 1 || got[1].Name != "0002_row.sql" {
		t.Fatalf("Up: %+v %v", got, err)
	}
	if got, err := migrate.Up(ctx, db, migrate.SQLite, line()); err != nil || len(got) != 0 {
		t.Fatalf("Up again: %+v %v", got, err)
	}
	if _, err := migrate.Up(ctx, db, migrate.SQLite, migrate.Line{Table: "Bad Name", FS: line().FS}); err == nil {
		t.Fatal("a table name that is not an identifier accepted")
	}
}
