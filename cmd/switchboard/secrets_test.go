package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
)

// secrets rotate needs a key (exit 2 naming the variable, never showing a key) and
// reports what it sealed again.
func TestSecretsRotate(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + filepath.Join(t.TempDir(), "sb.db")
	if code, _, stderr := runCLI(t, map[string]string{"SWITCHBOARD_DATABASE_URL": url}, "secrets", "rotate"); code != exitUsage || !strings.Contains(stderr, featureserver.EnvSecretsKey) {
		t.Fatalf("without a key: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, map[string]string{featureserver.EnvSecretsKey: "not-a-key"}, "secrets", "rotate", "--database-url", url); code != exitUsage ||
		!strings.Contains(stderr, featureserver.EnvSecretsKey) || strings.Contains(stderr, "not-a-key") {
		t.Fatalf("a bad key: exit %d, %q", code, stderr)
	}
	k1, k2 := secretbox.NewKey(), secretbox.NewKey()
	code, stdout, stderr := runCLI(t, map[string]string{featureserver.EnvSecretsKey: k2 + "," + k1}, "secrets", "rotate", "--database-url", url, "--json")
	if code != exitOK {
		t.Fatalf("rotate: exit %d, %q", code, stderr)
	}
	if got := decodeJSONLine[featureserver.SecretsReport](t, stdout, "database", "keys", "node_values", "endpoints"); got.Keys != 2 || strings.Contains(stdout, k1) {
		t.Fatalf("rotate: %+v", got)
	}
	code, stdout, _ = runCLI(t, map[string]string{featureserver.EnvSecretsKey: k2 + "," + k1}, "secrets", "rotate", "--database-url", url)
	if code != exitOK || !strings.Contains(stdout, "no longer needed") || strings.Contains(stdout, k2) {
		t.Fatalf("rotate: exit %d, %q", code, stdout)
	}
}
