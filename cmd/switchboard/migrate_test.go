package main

import (
	"path/filepath"
	"strconv"
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
	// The outbox's line, then the node store's, every migration applied.
	lines := map[string]int{}
	for _, m := range got.Migrations {
		lines[m.Line]++
		if !m.Applied {
			t.Fatalf("up left %+v pending", m)
		}
	}
	if len(got.Applied) != len(got.Migrations) || lines["outbox_migrations"] == 0 || lines["node_migrations"] == 0 ||
		got.Migrations[0].Name != "0001_init" || got.Migrations[len(got.Migrations)-1].Line != "node_migrations" {
		t.Fatalf("up: %+v", got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "up", "--database-url", url, "--json")
	if got := decodeJSONLine[featureserver.MigrationReport](t, stdout); code != exitOK || len(got.Applied) != 0 {
		t.Fatalf("up again: exit %d, %+v", code, got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "status", "--database-url", url)
	if code != exitOK || !strings.Contains(stdout, "outbox_migrations") || !strings.Contains(stdout, "node_migrations") || strings.Contains(stdout, "pending") {
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
	var pending int
	if i := strings.Index(stdout, " pending: run"); i > 0 {
		fields := strings.Fields(stdout[:i])
		pending, _ = strconv.Atoi(fields[len(fields)-1])
	}
	if code != exitOK || pending == 0 {
		t.Fatalf("status: exit %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI(t, nil, "migrate", "up", "--database-url", u, "--json")
	if code != exitOK {
		t.Fatalf("up: exit %d, %q", code, stderr)
	}
	got := decodeJSONLine[featureserver.MigrationReport](t, stdout)
	last := got.Migrations[len(got.Migrations)-1]
	if got.Database != "postgres" || len(got.Applied) != pending || len(got.Migrations) != pending || !last.Applied || last.Line != "node_migrations" {
		t.Fatalf("up: %+v, want the %d pending applied", got, pending)
	}
}
