package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// TestSchema: each test gets an empty schema of its own, which its connections use,
// and which is gone once the test ends.
func TestSchema(t *testing.T) {
	ctx := context.Background()
	var first string
	t.Run("inner", func(t *testing.T) {
		u, schema := pgtest.Schema(t)
		first = schema
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var current string
		if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&current); err != nil || current != schema {
			t.Fatalf("current_schema %q %v, want %q", current, err, schema)
		}
		if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
		_, other := pgtest.Schema(t)
		if other == schema {
			t.Fatal("two schemas of one name")
		}
	})
	if first == "" {
		t.Skip("no PostgreSQL")
	}
	conn, err := pgx.Connect(ctx, pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, first).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %s kept after its test: %d %v", first, n, err)
	}
}

// TestWithSchema: the schema travels as search_path, other parameters kept; a URL
// that is not postgres:// is refused.
func TestWithSchema(t *testing.T) {
	got, err := pgtest.WithSchema("postgres://u@h:5432/db?sslmode=disable", "s1")
	if err != nil || got != "postgres://u@h:5432/db?search_path=s1&sslmode=disable" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := pgtest.WithSchema("host=h user=u", "s1"); err == nil {
		t.Fatal("a keyword/value string accepted")
	}
}
