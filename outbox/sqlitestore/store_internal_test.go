package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// openTest opens a store with opts on a new file called name in tb's temporary
// directory; tb's cleanup closes it.
func openTest(tb testing.TB, name string, opts Options) *Store {
	tb.Helper()
	s, err := Open(context.Background(), filepath.Join(tb.TempDir(), name), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// queryPlan is SQLite's plan of query: the detail of each line of EXPLAIN QUERY PLAN.
func queryPlan(db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	return sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (string, error) {
		var id, parent, unused int
		var detail string
		err := r.Scan(&id, &parent, &unused, &detail)
		return detail, err
	})
}
