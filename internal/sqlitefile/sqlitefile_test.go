package sqlitefile

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// Connections switching one new file to WAL at once all succeed (SQLite refuses the
// losers with SQLITE_BUSY without waiting: Prepare tries again), and leave it in WAL
// mode, readable by its owner only.
func TestPrepareConcurrently(t *testing.T) {
	for range 50 {
		path := filepath.Join(t.TempDir(), "db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = Prepare(context.Background(), path, 10*time.Second) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		err = db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		db.Close()
		if err != nil || mode != "wal" {
			t.Fatalf("journal mode %q, %v; want wal", mode, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("file mode %v, %v; want 0600", fi.Mode().Perm(), err)
		}
	}
}

// An existing file keeps its content, and a missing directory is an error.
func TestPrepareExistingAndMissing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	ctx := context.Background()
	if err := Prepare(ctx, path, time.Second); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE kept (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := Prepare(ctx, path, time.Second); err != nil {
		t.Fatal(err)
	}
	db, _ = sql.Open("sqlite", "file:"+path)
	defer db.Close()
	if _, err := db.Exec("INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatalf("Prepare replaced an existing database: %v", err)
	}
	if err := Prepare(ctx, filepath.Join(dir, "no", "db"), time.Second); err == nil {
		t.Fatal("prepared a file in a missing directory")
	}
}
