package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
)

// migrateAsBefore migrates a file as the hand-written runner did before goose, up to
// and including version upTo: outbox_migrations (version, applied_at in µs), each
// file's body run whole in its transaction.
func migrateAsBefore(t *testing.T, path string, upTo int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS outbox_migrations (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(sqlitestore.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		if v > upTo {
			break
		}
		body, err := fs.ReadFile(sqlitestore.Migrations(), name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.Exec(`INSERT INTO outbox_migrations (version, applied_at) VALUES (?, ?)`, v, time.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
}

// embeddedVersions are the versions of the embedded migrations, in order.
func embeddedVersions(t *testing.T) []int {
	t.Helper()
	names, err := fs.Glob(sqlitestore.Migrations(), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	vs := make([]int, len(names))
	for i, name := range names {
		if vs[i], err = strconv.Atoi(strings.SplitN(name, "_", 2)[0]); err != nil {
			t.Fatal(err)
		}
	}
	return vs
}

func appliedVersions(t *testing.T, st *sqlitestore.Store) []int {
	t.Helper()
	rows, err := st.DB().Query(`SELECT version FROM outbox_migrations ORDER BY version`)
	vs, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (int, error) {
		var v int
		err := r.Scan(&v)
		return v, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// TestOpenFileOfTheOldRunner: a file the runner before goose migrated, fully or in
// part, opens: goose reads its record, applies only what it lacks (once), and the
// store works on it.
func TestOpenFileOfTheOldRunner(t *testing.T) {
	for _, upTo := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("up to %d", upTo), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox.db")
			migrateAsBefore(t, path, upTo)
			st := open(t, path)
			if got, want := appliedVersions(t, st), embeddedVersions(t); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("versions recorded %v, want %v once each", got, want)
			}
			var idx int
			if err := st.DB().QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'outbox_deliveries_endpoint_failed'`).Scan(&idx); err != nil || idx != 1 {
				t.Fatalf("migration 3's index: %d %v", idx, err)
			}
			ctx := context.Background()
			if err := st.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: outboxdriver.Endpoint{ID: "ep", Account: "a",
				URL: "https://example.com", Status: outboxdriver.EndpointActive, InFlightCap: 1}}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: "a", ID: "ep"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOpenConcurrently: processes (here goroutines, each with its own pool) opening
// one new file at once all succeed, and each migration is applied once.
func TestOpenConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox.db")
	const n = 6
	var wg sync.WaitGroup
	stores := make([]*sqlitestore.Store, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}
	if got, want := appliedVersions(t, stores[0]), embeddedVersions(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions recorded %v, want %v", got, want)
	}
}
