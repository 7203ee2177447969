package apptest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// --app with only a scheme and a host moves each app there, keeping its path, retry
// fragment and transport; with a path it replaces the app.
func TestAppUnder(t *testing.T) {
	for _, tc := range []struct{ flag, own, want string }{
		{"", "ws://127.0.0.1:3000/ws#rc=3", "ws://127.0.0.1:3000/ws#rc=3"},
		{"http://ci:8080", "ws://127.0.0.1:3000/ws#rc=3&rp=ct", "ws://ci:8080/ws#rc=3&rp=ct"},
		{"http://ci:8080/", "http://127.0.0.1:3000/call?x=1", "http://ci:8080/call?x=1"},
		{"https://ci", "ws://127.0.0.1:3000/ws", "wss://ci/ws"},
		{"wss://ci", "http://127.0.0.1:3000/call", "https://ci/call"},
		{"http://ci:8080/other#rc=1", "ws://127.0.0.1:3000/ws", "http://ci:8080/other#rc=1"},
		{"http://ci:8080", "", "http://ci:8080"},
	} {
		if got, err := appUnder(tc.flag, tc.own); err != nil || got != tc.want {
			t.Errorf("--app %q on %q: %q, %v; want %q", tc.flag, tc.own, got, err, tc.want)
		}
	}
}

// A folder's ws_handshake_timeout sets its calls' WebSocket handshake timeout unless
// the run was given one; a folder without it keeps the run's.
func TestFolderHandshakeTimeout(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("slow/a.yaml", "app: ws://127.0.0.1:3000/ws\n")
	write("slow/"+FolderConfigName, "ws_handshake_timeout: 5s\n")
	write("plain/b.yaml", "app: ws://127.0.0.1:3000/ws\n")
	const run = 1500 * time.Millisecond
	for _, given := range []bool{false, true} {
		s, err := load(Config{
			Paths:                 []string{filepath.Join(root, "slow"), filepath.Join(root, "plain")},
			HandshakeTimeoutGiven: given,
			CallOptions: func(app string) callctl.Options {
				return callctl.Options{AppURL: app, WebSocket: wsclient.Options{HandshakeTimeout: run}}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]time.Duration{"a": 5 * time.Second, "b": run}
		if given {
			want["a"] = run
		}
		for _, tc := range s.cases {
			if got := tc.opts.WebSocket.HandshakeTimeout; got != want[tc.name] {
				t.Errorf("given %v: %s's handshake timeout %v, want %v", given, tc.name, got, want[tc.name])
			}
		}
		if len(s.cases) != 2 {
			t.Fatalf("%d cases", len(s.cases))
		}
	}
}
