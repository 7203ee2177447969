package sqlitestore_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/outboxtest"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

func open(tb testing.TB, path string) *sqlitestore.Store {
	tb.Helper()
	st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// TestConformance runs the shared store suite on SQLite.
func TestConformance(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) outboxtest.Bundle {
		st := open(t, filepath.Join(t.TempDir(), "outbox.db"))
		return outboxtest.Bundle{Store: st, BeginTx: func(ctx context.Context) (outboxtest.Tx, error) {
			tx, err := st.DB().BeginTx(ctx, nil)
			if err != nil {
				return outboxtest.Tx{}, err
			}
			return outboxtest.Tx{Tx: tx, Commit: tx.Commit, Rollback: tx.Rollback}, nil
		}}
	})
}

// TestOpen: pragmas are applied, migrations run once, bad options are refused.
func TestOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	st := open(t, path)
	var mode, sync string
	if err := st.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q %v", mode, err)
	}
	if err := st.DB().QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != "2" { // 2 = FULL
		t.Fatalf("synchronous %q %v", sync, err)
	}
	again := open(t, path) // migrations already applied: no error
	var n int
	migrations, _ := fs.Glob(sqlitestore.Migrations(), "*.sql")
	if err := again.DB().QueryRow(`SELECT count(*) FROM outbox_migrations`).Scan(&n); err != nil || n != len(migrations) { // one per embedded migration
		t.Fatalf("migrations recorded %d, %v", n, err)
	}
	for _, bad := range []struct {
		path string
		opts sqlitestore.Options
	}{{"", sqlitestore.Options{}}, {":memory:", sqlitestore.Options{}}, {path, sqlitestore.Options{Synchronous: "OFF"}}} {
		if _, err := sqlitestore.Open(context.Background(), bad.path, bad.opts); !errors.Is(err, outboxdriver.ErrInvalid) {
			t.Fatalf("Open(%q, %+v): %v", bad.path, bad.opts, err)
		}
	}
}

// BenchmarkCycle: the store's cost of one delivery, publish to success (no HTTP).
//
//	go test -run '^$' -bench Cycle ./outbox/sqlitestore
func BenchmarkCycle(b *testing.B) {
	outboxtest.BenchmarkCycle(b, open(b, filepath.Join(b.TempDir(), "outbox.db")))
}

// BenchmarkCycleWatched is BenchmarkCycle with Options.OnWrite set, as a node's
// store has it (its readiness hears every write): what watching costs a delivery.
func BenchmarkCycleWatched(b *testing.B) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "outbox.db"),
		sqlitestore.Options{OnWrite: func(context.Context, bool, error) {}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	outboxtest.BenchmarkCycle(b, st)
}
