package main

import (
	"fmt"
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
	// Every migration of the outbox's line, then of the node store's, applied.
	last := map[string]int64{}
	for _, m := range got.Migrations {
		if !m.Applied {
			t.Fatalf("up left %s %d pending", m.Line, m.Version)
		}
		last[m.Line] = m.Version
	}
	if len(got.Applied) != len(got.Migrations) || got.Migrations[0].Name != "0001_init" || got.Migrations[0].Line != "outbox_migrations" ||
		got.Migrations[len(got.Migrations)-1].Line != "node_migrations" || last["outbox_migrations"] < 6 || last["node_migrations"] < 8 {
		t.Fatalf("up: %+v", got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "up", "--database-url", url, "--json")
	if got := decodeJSONLine[featureserver.MigrationReport](t, stdout); code != exitOK || len(got.Applied) != 0 {
		t.Fatalf("up again: exit %d, %+v", code, got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "status", "--database-url", url)
	if code != exitOK || !strings.Contains(stdout, fmt.Sprintf("outbox_migrations  %d ", last["outbox_migrations"])) ||
		!strings.Contains(stdout, fmt.Sprintf("node_migrations    %d ", last["node_migrations"])) || strings.Contains(stdout, "pending") {
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
	code, stdout, stderr := runCLI(t, nil, "migrate", "status", "--database-url", u, "--json")
	status := decodeJSONLine[featureserver.MigrationReport](t, stdout)
	if code != exitOK || len(status.Migrations) < 5 || len(status.Applied) != 0 {
		t.Fatalf("status: exit %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "status", "--database-url", u)
	if want := fmt.Sprintf("%d pending", len(status.Migrations)); code != exitOK || !strings.Contains(stdout, want) {
		t.Fatalf("status: exit %d, want %q\n%s", code, want, stdout)
	}
	code, stdout, stderr = runCLI(t, nil, "migrate", "up", "--database-url", u, "--json")
	if code != exitOK {
		t.Fatalf("up: exit %d, %q", code, stderr)
	}
	got := decodeJSONLine[featureserver.MigrationReport](t, stdout)
	if n := len(got.Migrations); got.Database != "postgres" || len(got.Applied) != n || !got.Migrations[n-1].Applied || got.Migrations[n-1].Line != "node_migrations" {
		t.Fatalf("up: %+v", got)
	}
}
