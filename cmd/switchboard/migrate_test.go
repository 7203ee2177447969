package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// TestMigrateSQLite: status reads a file without changing it (and says when there is
// none), up applies what is missing, once; --json lists every migration.
func TestMigrateSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sb.db")
	url := "sqlite:" + path
	if code, _, stderr := runCLI(t, nil, "migrate", "status", "--database-url", url); code != exitFailure || !strings.Contains(stderr, "no SQLite database") {
		t.Fatalf("status of a missing file: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := runCLI(t, map[string]string{"SWITCHBOARD_DATABASE_URL": url}, "migrate", "up", "--json")
	if code != exitOK {
		t.Fatalf("up: exit %d, %q", code, stderr)
	}
	got := decodeJSONLine[featureserver.MigrationReport](t, stdout, "database", "migrations", "applied")
	// The outbox's six and the node store's eight.
	if len(got.Applied) != 14 || len(got.Migrations) != 14 || !got.Migrations[13].Applied || got.Migrations[0].Name != "0001_init" ||
		got.Migrations[6].Line != "node_migrations" {
		t.Fatalf("up: %+v", got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "up", "--database-url", url, "--json")
	if got := decodeJSONLine[featureserver.MigrationReport](t, stdout); code != exitOK || len(got.Applied) != 0 {
		t.Fatalf("up again: exit %d, %+v", code, got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "status", "--database-url", url)
	if code != exitOK || !strings.Contains(stdout, "outbox_migrations  6") || !strings.Contains(stdout, "node_migrations    8") || strings.Contains(stdout, "pending") {
		t.Fatalf("status: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "migrate", "status", "--database-url", "mysql://x/y"); code != exitUsage || !strings.Contains(stderr, "postgres://") {
		t.Fatalf("a bad URL: exit %d, %q", code, stderr)
	}
}

// TestMigratePostgres: on a schema of its own (search_path in the URL), status lists
// the migrations pending, up applies them.
func TestMigratePostgres(t *testing.T) {
	u, _ := pgtest.Schema(t)
	code, stdout, stderr := runCLI(t, nil, "migrate", "status", "--database-url", u)
	if code != exitOK || !strings.Contains(stdout, "5 pending") {
		t.Fatalf("status: exit %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI(t, nil, "migrate", "up", "--database-url", u, "--json")
	if code != exitOK {
		t.Fatalf("up: exit %d, %q", code, stderr)
	}
	if got := decodeJSONLine[featureserver.MigrationReport](t, stdout); got.Database != "postgres" || len(got.Applied) != 5 || !got.Migrations[4].Applied || got.Migrations[4].Line != "node_migrations" {
		t.Fatalf("up: %+v", got)
	}
}
