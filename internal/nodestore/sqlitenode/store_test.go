package sqlitenode

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/nodestore/nodestoretest"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
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

// On the outbox's single writer (the node's layout: one writer for the file) the
// store keeps every contract.
func TestConformanceOnTheOutboxWriter(t *testing.T) {
	nodestoretest.Run(t, func(t *testing.T) nodestore.Store {
		path := filepath.Join(t.TempDir(), "node.db")
		ob, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), path, Options{Writer: ob})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			s.Close()
			ob.Close()
		})
		return s
	})
}

// The file is created readable by its owner only, and a file deleted under the
// store is not silently created afresh by a new connection: reads fail.
func TestFileModeAndNoFreshFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SaveCall(context.Background(), nodestore.Call{CallSid: "c", AccountSid: "a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", name, fi.Mode(), err)
		}
	}
	s.db.SetMaxIdleConns(0) // the next read opens a new connection
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCall(context.Background(), nodestore.GetCallParams{AccountSid: "a", CallSid: "c"}); err == nil {
		t.Error("a read after the file was deleted succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the deleted file is back: %v", err)
	}
}

// A database made by the first release (migration 0001 only) opens after an upgrade,
// and opening twice applies nothing twice.
func TestMigrationsUpgradeAnOldDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := migrations.ReadFile("migrations/0001_init.sql")
	if _, err := db.Exec(string(first)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	all, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock()
	for range 2 {
		s, err := Open(context.Background(), path, Options{Clock: clock})
		if err != nil {
			t.Fatalf("open after upgrade: %v", err)
		}
		if err := s.SaveCall(context.Background(), nodestore.Call{CallSid: "c", AccountSid: "a", Active: true, CreatedAt: time.Now()}); err != nil {
			t.Fatalf("the upgraded schema lacks the new column: %v", err)
		}
		var applied int
		if err := s.db.QueryRow(`SELECT count(*) FROM fs_schema_migrations WHERE applied_at = ?`, testkit.Epoch.UnixMilli()).Scan(&applied); err != nil || applied != len(all) {
			t.Fatalf("%d migrations recorded at the store's clock (%v), want all %d", applied, err, len(all))
		}
		clock.Advance(time.Hour) // a second open would record another time
		s.Close()
	}
}

func TestOpenRefusesAnEmptyPath(t *testing.T) {
	t.Parallel()
	if s, err := Open(context.Background(), "", Options{}); err == nil {
		s.Close()
		t.Fatal("opened a store at an empty path")
	}
}
