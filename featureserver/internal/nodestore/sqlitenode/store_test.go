package sqlitenode

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/nodestoretest"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
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

// A database the runner before goose migrated (fs_schema_migrations, by file name)
// opens: what it applied is carried over and not applied again (0002's ALTER TABLE
// would fail), the rest is applied, and opening twice applies nothing twice.
func TestMigrationsUpgradeADatabaseOfTheRunnerBeforeGoose(t *testing.T) {
	t.Parallel()
	path := legacyDB(t, []string{"migrations/0001_init.sql", "migrations/0002_call_active.sql"})
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

// A database of a release of the runner before goose (migrations 0001 to
// 0006_call_recovery, or to 0007_account_rotation, recorded by file name) gets what
// it lacks of the account rotation (0007) and the node leases (0008) on upgrade: a
// recorded name is carried over as its own version, not taken for another.
func TestMigrationsUpgradeFromCallRecoveryToNodeLeases(t *testing.T) {
	t.Parallel()
	for _, last := range []string{"6", "7"} {
		t.Run("0001-000"+last, func(t *testing.T) { testUpgradeFromLegacy(t, last) })
	}
}

func testUpgradeFromLegacy(t *testing.T, last string) {
	old, err := fs.Glob(migrations, "migrations/000[1-"+last+"]_*.sql")
	if n, _ := strconv.Atoi(last); err != nil || len(old) != n {
		t.Fatalf("the runner's migrations: %v, %v", old, err)
	}
	path := legacyDB(t, old)
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("open after upgrade: %v", err)
	}
	defer s.Close()
	c := nodestore.Call{CallSid: "c", AccountSid: "a", Active: true, Node: "node-1", CreatedAt: time.Now(),
		Recovery: &nodestore.CallRecovery{AppURL: "http://app.example/"}}
	if err := s.SaveCall(context.Background(), c); err != nil {
		t.Fatalf("the upgraded schema lacks a column: %v", err)
	}
	all, _ := fs.Glob(migrations, "migrations/*.sql")
	want, _ := strconv.Atoi(filepath.Base(all[len(all)-1])[:4])
	var max int
	if err := s.db.QueryRow(`SELECT max(version) FROM node_migrations`).Scan(&max); err != nil || max != want {
		t.Fatalf("latest migration %d (%v), want %d", max, err, want)
	}
	if err := s.PutAccount(context.Background(), nodestore.PutAccountParams{Account: nodestore.Account{Sid: "a", Name: "a", CreatedAt: time.Now(),
		WebhookSecret: "new", PreviousWebhookSecret: "old", PreviousSecretUntil: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatalf("the upgraded schema lacks the account rotation: %v", err)
	}
	if err := s.CheckWritable(context.Background()); err != nil {
		t.Fatalf("CheckWritable on the goose record: %v", err)
	}
}

// legacyDB is the path of a new database that the runner before goose migrated with
// files: each applied and recorded by its name in fs_schema_migrations.
func legacyDB(t *testing.T, files []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE fs_schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		script, _ := migrations.ReadFile(f)
		if _, err := db.Exec(string(script)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := db.Exec(`INSERT INTO fs_schema_migrations VALUES (?, 1700000000000)`, f); err != nil {
			t.Fatal(err)
		}
	}
	return path
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

// With a key, the file holds no secret in clear; rotation keeps them readable.
func TestSecretsAtRest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node.db")
	nodestoretest.RunSecrets(t, func(t *testing.T, k *secretbox.Keyring) nodestoretest.SecretStore {
		s, err := Open(context.Background(), path, Options{Secrets: k})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, func(t *testing.T) []byte {
		var all []byte
		for _, name := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(name)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	})
}
