package main

import (
	"path/filepath"
	"regexp"
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
	// Every migration of both lines, the outbox's first, applied; counted from the
	// report rather than pinned, so that a new migration does not break the test.
	outboxLast, nodeLast := lastVersions(t, got)
	if len(got.Applied) != len(got.Migrations) || got.Migrations[0].Name != "0001_init" || outboxLast == 0 || nodeLast == 0 {
		t.Fatalf("up: %+v", got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "up", "--database-url", url, "--json")
	if got := decodeJSONLine[featureserver.MigrationReport](t, stdout); code != exitOK || len(got.Applied) != 0 {
		t.Fatalf("up again: exit %d, %+v", code, got)
	}
	code, stdout, _ = runCLI(t, nil, "migrate", "status", "--database-url", url)
	if code != exitOK || !regexp.MustCompile(`outbox_migrations +`+strconv.Itoa(outboxLast)+` `).MatchString(stdout) ||
		!regexp.MustCompile(`node_migrations +`+strconv.Itoa(nodeLast)+` `).MatchString(stdout) || strings.Contains(stdout, "pending") {
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
	pending := regexp.MustCompile(`\n(\d+) pending: run`).FindStringSubmatch(stdout)
	if code != exitOK || pending == nil || pending[1] != strconv.Itoa(strings.Count(stdout, " pending\n")) {
		t.Fatalf("status: exit %d %q\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = runCLI(t, nil, "migrate", "up", "--database-url", u, "--json")
	if code != exitOK {
		t.Fatalf("up: exit %d, %q", code, stderr)
	}
	got := decodeJSONLine[featureserver.MigrationReport](t, stdout)
	if _, nodeLast := lastVersions(t, got); got.Database != "postgres" || strconv.Itoa(len(got.Applied)) != pending[1] || nodeLast == 0 {
		t.Fatalf("up: %+v", got)
	}
}

// lastVersions checks that a report lists the outbox's migrations, then the node's,
// every one applied, and returns the last version of each line.
func lastVersions(t *testing.T, r featureserver.MigrationReport) (outbox, node int) {
	t.Helper()
	for i, m := range r.Migrations {
		if !m.Applied {
			t.Fatalf("migration %d (%s %s) not applied: %+v", i, m.Line, m.Name, r)
		}
		switch {
		case m.Line == "outbox_migrations" && node == 0:
			outbox = int(m.Version)
		case m.Line == "node_migrations":
			node = int(m.Version)
		default:
			t.Fatalf("migration %d is %s after the node's, or of an unknown line: %+v", i, m.Line, r)
		}
	}
	return outbox, node
}
