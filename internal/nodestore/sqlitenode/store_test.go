package sqlitenode

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/nodestore/nodestoretest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConformance(t *testing.T) {
	nodestoretest.Run(t, func(t *testing.T) nodestore.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "node.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// A database the runner before goose migrated (fs_schema_migrations, by file name)
// opens: what it applied is carried over and not applied again (0002's ALTER TABLE
// would fail), the rest is applied, and opening twice applies nothing twice.
func TestMigrationsUpgradeADatabaseOfTheRunnerBeforeGoose(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE fs_schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"migrations/0001_init.sql", "migrations/0002_call_active.sql"} {
		script, _ := migrations.ReadFile(f)
		if _, err := db.Exec(string(script)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO fs_schema_migrations VALUES (?, 1700000000000)`, f); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	all, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatalf("open after upgrade: %v", err)
		}
		if err := s.SaveCall(context.Background(), nodestore.Call{CallSid: "c", AccountSid: "a", Active: true, CreatedAt: time.Now()}); err != nil {
			t.Fatalf("the upgraded schema lacks the new column: %v", err)
		}
		var applied, carried int
		if err := s.db.QueryRow(`SELECT count(*) FROM node_migrations`).Scan(&applied); err != nil || applied != len(all) {
			t.Fatalf("%d migrations recorded (%v), want all %d", applied, err, len(all))
		}
		if err := s.db.QueryRow(`SELECT count(*) FROM node_migrations WHERE applied_at = 1700000000000000`).Scan(&carried); err != nil || carried != 2 {
			t.Fatalf("%d migrations carried over with their time (%v), want 2", carried, err)
		}
		s.Close()
	}
}

// Processes opening one new database at once migrate it once, and all open.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node.db")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := Open(context.Background(), path, Options{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefusesAnEmptyPath(t *testing.T) {
	t.Parallel()
	if s, err := Open(context.Background(), "", Options{}); err == nil {
		s.Close()
		t.Fatal("opened a store at an empty path")
	}
}
