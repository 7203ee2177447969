package apptest

import "testing"

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
