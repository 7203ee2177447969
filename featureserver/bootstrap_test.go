package featureserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

func TestParseBootstrap(t *testing.T) {
	t.Parallel()
	good := `accounts:
  - sid: acct-1
    name: Acme
    api_token: 0123456789abcdef0123
    applications:
      - sid: app-1
        name: IVR
        call_hook: {url: "https://ivr.example.com/call#rc=2&rp=5xx,ct"}
        call_status_hook: {url: "https://ivr.example.com/status"}
`
	b, err := ParseBootstrap("boot.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Accounts) != 1 || b.Accounts[0].Applications[0].CallHook.URL == "" {
		t.Fatalf("parsed %+v", b)
	}
	for _, tt := range []struct{ name, doc, mention string }{
		{"unknown key", "accounts:\n  - sid: a\n    name: A\n    api_token: 0123456789abcdef0123\n    colour: blue\n", "[5:"},
		{"short token", "accounts:\n  - sid: a\n    name: A\n    api_token: short\n", "api_token"},
		{"bad hook", "accounts:\n  - sid: a\n    name: A\n    api_token: 0123456789abcdef0123\n    applications:\n      - {sid: b, name: B, call_hook: {url: 'ftp://x'}}\n", "call_hook"},
		{"ws status hook", "accounts:\n  - sid: a\n    name: A\n    api_token: 0123456789abcdef0123\n    applications:\n      - {sid: b, name: B, call_hook: {url: 'ws://x'}, call_status_hook: {url: 'ws://x'}}\n", "call_status_hook"},
		{"user-info in a hook", "accounts:\n  - sid: a\n    name: A\n    api_token: 0123456789abcdef0123\n    applications:\n      - {sid: b, name: B, call_hook: {url: 'https://u:hunter2@x/'}}\n", "username and password"},
		{"duplicate sid", "accounts:\n  - {sid: a, name: A, api_token: 0123456789abcdef0123}\n  - {sid: a, name: B, api_token: 0123456789abcdef0124}\n", "twice"},
		{"not yaml", "accounts: [\n", "boot.yaml"},
	} {
		if _, err := ParseBootstrap("boot.yaml", []byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.mention) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %v, want one mentioning %q (and no password)", tt.name, err, tt.mention)
		}
	}
}

// The example the docs and the README's tour use is a valid bootstrap file.
func TestBootstrapExampleParses(t *testing.T) {
	t.Parallel()
	b, err := LoadBootstrap(filepath.Join("..", "examples", "bootstrap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Accounts) != 1 || len(b.Accounts[0].Applications) != 2 {
		t.Errorf("parsed %+v", b)
	}
}

// Rotating a token in the bootstrap file revokes the one the file installed before.
func TestBootstrapTokenRotationRevokesTheOldToken(t *testing.T) {
	t.Parallel()
	s, err := sqlitenode.Open(context.Background(), filepath.Join(t.TempDir(), "n.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := func(token string) *Bootstrap {
		b, err := ParseBootstrap("b.yaml", []byte("accounts:\n  - {sid: acct, name: A, api_token: "+token+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	if err := doc("old-token-0123456789abcdef").apply(ctx, s, testkit.NewClock()); err != nil {
		t.Fatal(err)
	}
	if err := doc("new-token-0123456789abcdef").apply(ctx, s, testkit.NewClock()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AccountByToken(ctx, nodestore.HashToken("old-token-0123456789abcdef")); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("the rotated-out token still works: %v", err)
	}
	if a, err := s.AccountByToken(ctx, nodestore.HashToken("new-token-0123456789abcdef")); err != nil || a.Sid != "acct" {
		t.Errorf("the new token: %v %v", a, err)
	}
}
