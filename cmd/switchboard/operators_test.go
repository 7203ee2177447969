package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver"
)

// readPage reads a page of the repository (a slash path from its root).
func readPage(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// settingRow is a row of docs/operators.md's settings table: | `VAR` | `--flag` ... |.
var settingRow = regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]+)` \\| ([^|]*) \\|")

// The operators' reference lists every setting a node reads (every variable
// `serve --print-config` prints, the secrets key, the trusted proxies and both
// allow-lists among them), each with a flag serve has, or said to be the
// environment's only.
func TestOperatorsPageListsEverySetting(t *testing.T) {
	page := readPage(t, "docs/operators.md")
	rows := map[string]string{}
	for _, m := range settingRow.FindAllStringSubmatch(page, -1) {
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	cfg, err := featureserver.LoadConfig(func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(&cli{getenv: func(string) string { return "" }})
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range cfg.Printable() {
		flagCell, ok := rows[kv[0]]
		if !ok {
			t.Errorf("docs/operators.md's settings table has no row for %s", kv[0])
			continue
		}
		if flagCell == "(environment only)" {
			if f := serve.Flag(strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(kv[0], "SWITCHBOARD_"), "_", "-"))); f != nil {
				t.Errorf("%s: said to be the environment's only, but serve has --%s", kv[0], f.Name)
			}
			continue
		}
		flag, _, _ := strings.Cut(strings.Trim(flagCell, "`"), "`")
		if serve.Flag(strings.TrimPrefix(flag, "--")) == nil {
			t.Errorf("%s: serve has no flag %s", kv[0], flag)
		}
	}
}

// adminTokenValue finds an admin token a shell line sets: SWITCHBOARD_ADMIN_TOKEN=V
// (export, env, docker -e, a systemd Environment=) or --admin-token V.
var adminTokenValue = regexp.MustCompile(`(?:SWITCHBOARD_ADMIN_TOKEN=|--admin-token[ =])("[^"]*"|'[^']*'|\S+)`)

// Every admin token the documentation and the examples show is one a node takes:
// made by a command ($(openssl rand ...)), taken from a variable, or, written out,
// one of 32 characters or more that no page shows as an example (the node refuses
// those at start).
func TestDocumentedAdminTokensAreAccepted(t *testing.T) {
	pages := append([]string{"examples/bootstrap.yaml", "Dockerfile"}, commandPages...)
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if name := "docs/" + filepath.Base(d); !slices.Contains(pages, name) {
			pages = append(pages, name)
		}
	}
	found := 0
	for _, name := range pages {
		for _, m := range adminTokenValue.FindAllStringSubmatch(readPage(t, name), -1) {
			v := strings.Trim(m[1], `"'`)
			found++
			if strings.HasPrefix(v, "$") || strings.HasPrefix(v, "(") {
				continue // made when run, or the reader's own
			}
			if _, err := featureserver.LoadConfig(func(k string) string {
				if k == featureserver.EnvAdminToken {
					return v
				}
				return ""
			}, nil); err != nil {
				t.Errorf("%s shows the admin token %q, which the node refuses: %v", name, v, err)
			}
		}
	}
	if found < 2 {
		t.Fatalf("%d admin tokens found: the test reads too little", found)
	}
}
