package fragment

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// One row per rule of docs/call-control.md §1 and per example of the jambonz retry
// reference (003_87c6e7301256d6da.txt).
func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		url          string
		clean        string
		transport    Transport
		rc           int
		rcDefault    bool
		rp           []Class
		rpExplicit   bool
		hsRetried    bool
		warnings     int
		ignoredKeys  []string
		warningMatch string
	}{
		// Transport and defaults.
		{name: "http default rc 0, rp ct", url: "https://app.example.com/call", clean: "https://app.example.com/call",
			transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}},
		{name: "plain http", url: "http://app.example.com/call", clean: "http://app.example.com/call",
			transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}},
		{name: "ws default rc 5, handshake timeouts not retried", url: "wss://app.example.com/ws", clean: "wss://app.example.com/ws",
			transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}},
		{name: "plain ws", url: "ws://10.0.0.5:3000/", clean: "ws://10.0.0.5:3000/",
			transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}},
		{name: "scheme is case-insensitive", url: "HTTPS://app.example.com/x#rc=1", clean: "https://app.example.com/x",
			transport: HTTP, rc: 1, rp: []Class{Connect}},
		// Reference examples.
		{name: "reference: http rc=3 rp=5xx,ct", url: "https://example.com/jambonz/call#rc=3&rp=5xx,ct", clean: "https://example.com/jambonz/call",
			transport: HTTP, rc: 3, rp: []Class{Status5xx, Connect}, rpExplicit: true},
		{name: "reference: ws rc=2 rp=ct", url: "wss://example.com/jambonz/ws#rc=2&rp=ct", clean: "wss://example.com/jambonz/ws",
			transport: WebSocket, rc: 2, rp: []Class{Connect}, rpExplicit: true, hsRetried: true},
		{name: "reference: ws connection failures, three retries", url: "wss://app.example.com/jambonz#rc=3&rp=ct", clean: "wss://app.example.com/jambonz",
			transport: WebSocket, rc: 3, rp: []Class{Connect}, rpExplicit: true, hsRetried: true},
		{name: "reference: http server errors and connection failures twice", url: "https://app.example.com/jambonz/call#rc=2&rp=5xx,ct", clean: "https://app.example.com/jambonz/call",
			transport: HTTP, rc: 2, rp: []Class{Status5xx, Connect}, rpExplicit: true},
		{name: "reference: ws retries off", url: "wss://app.example.com/jambonz#rc=0", clean: "wss://app.example.com/jambonz",
			transport: WebSocket, rc: 0, rp: []Class{Connect}},
		// rc rules.
		{name: "rc above 5 is 5", url: "https://h/p#rc=9", clean: "https://h/p", transport: HTTP, rc: 5, rp: []Class{Connect}, warnings: 1, warningMatch: "above 5"},
		{name: "rc exactly 5", url: "https://h/p#rc=5", clean: "https://h/p", transport: HTTP, rc: 5, rp: []Class{Connect}},
		{name: "rc overflowing int is 5", url: "https://h/p#rc=99999999999999999999999", clean: "https://h/p", transport: HTTP, rc: 5, rp: []Class{Connect}, warnings: 1},
		{name: "rc=0 honoured on http", url: "https://h/p#rc=0", clean: "https://h/p", transport: HTTP, rc: 0, rp: []Class{Connect}},
		{name: "rc=0 honoured on ws (jambonz code would use 5)", url: "ws://h/p#rc=0", clean: "ws://h/p", transport: WebSocket, rc: 0, rp: []Class{Connect}},
		{name: "rc negative is invalid: default", url: "wss://h/p#rc=-1", clean: "wss://h/p", transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}, warnings: 1, warningMatch: "not a non-negative integer"},
		{name: "rc not a number is invalid: default", url: "https://h/p#rc=abc", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc decimal is invalid", url: "https://h/p#rc=2.5", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc empty is invalid", url: "wss://h/p#rc=", clean: "wss://h/p", transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc with plus sign is invalid", url: "https://h/p#rc=%2B3", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc with a form-encoded plus (space) is invalid", url: "https://h/p#rc=+3", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc padded with an encoded space is invalid", url: "wss://h/p#rc=%203", clean: "wss://h/p", transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc with a leading zero is an integer", url: "https://h/p#rc=03", clean: "https://h/p", transport: HTTP, rc: 3, rp: []Class{Connect}},
		{name: "semicolon is not a separator: unknown class", url: "wss://h/p#rp=ct;5xx", clean: "wss://h/p", transport: WebSocket, rc: 5, rcDefault: true, rp: []Class{Connect}, warnings: 2, warningMatch: "ct;5xx"},
		{name: "semicolon inside rc: invalid rc", url: "https://h/p#rc=1;rp=ct", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}, warnings: 1},
		{name: "rc repeated: last wins, warned", url: "https://h/p#rc=1&rc=2", clean: "https://h/p", transport: HTTP, rc: 2, rp: []Class{Connect}, warnings: 1},
		// rp rules.
		{name: "rp classes in the order given", url: "https://h/p#rp=all,5xx,4xx,rt,ct", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true,
			rp: []Class{All, Status5xx, Status4xx, ResponseTimeout, Connect}, rpExplicit: true},
		{name: "rp unknown class ignored with warning", url: "https://h/p#rc=9&rp=5xx,bogus", clean: "https://h/p", transport: HTTP, rc: 5,
			rp: []Class{Status5xx}, rpExplicit: true, warnings: 2, warningMatch: "bogus"},
		{name: "rp only unknown classes: default ct", url: "https://h/p#rp=bogus", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true,
			rp: []Class{Connect}, warnings: 2},
		{name: "rp duplicates and case folded", url: "https://h/p#rp=5XX,5xx,%20ct", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true,
			rp: []Class{Status5xx, Connect}, rpExplicit: true},
		{name: "ws explicit rp without ct: handshake timeouts not retried", url: "wss://h/p#rp=5xx", clean: "wss://h/p", transport: WebSocket, rc: 5, rcDefault: true,
			rp: []Class{Status5xx}, rpExplicit: true},
		{name: "ws explicit rp=all retries handshake timeouts", url: "wss://h/p#rc=1&rp=all", clean: "wss://h/p", transport: WebSocket, rc: 1,
			rp: []Class{All}, rpExplicit: true, hsRetried: true},
		{name: "http never retries handshake timeouts", url: "https://h/p#rp=ct", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true,
			rp: []Class{Connect}, rpExplicit: true},
		// Fragment handling.
		{name: "other keys ignored and reported", url: "https://h/p?x=1#rc=1&foo=bar", clean: "https://h/p?x=1", transport: HTTP, rc: 1,
			rp: []Class{Connect}, ignoredKeys: []string{"foo"}},
		{name: "empty fragment", url: "https://h/p#", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true, rp: []Class{Connect}},
		{name: "encoded comma in rp", url: "https://h/p#rp=5xx%2Cct", clean: "https://h/p", transport: HTTP, rc: 0, rcDefault: true,
			rp: []Class{Status5xx, Connect}, rpExplicit: true},
		{name: "port kept", url: "https://h:8443/p#rc=1", clean: "https://h:8443/p", transport: HTTP, rc: 1, rp: []Class{Connect}},
		{name: "@ in path and query is no user-info", url: "https://h/p@x?a=b@c#rc=1", clean: "https://h/p@x?a=b@c", transport: HTTP, rc: 1, rp: []Class{Connect}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.url)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.url, err)
			}
			p := got.Policy
			if got.Clean() != tt.clean {
				t.Errorf("clean URL = %q, want %q", got.Clean(), tt.clean)
			}
			if strings.Contains(got.Clean(), "#") {
				t.Errorf("clean URL %q still has a fragment", got.Clean())
			}
			if p.Transport != tt.transport || p.RetryCount != tt.rc || p.RetryCountDefault != tt.rcDefault {
				t.Errorf("transport, rc, default = %s, %d, %v; want %s, %d, %v", p.Transport, p.RetryCount, p.RetryCountDefault, tt.transport, tt.rc, tt.rcDefault)
			}
			if !slices.Equal(p.RetryOn, tt.rp) || p.RetryOnExplicit != tt.rpExplicit {
				t.Errorf("rp = %v explicit %v; want %v explicit %v", p.RetryOn, p.RetryOnExplicit, tt.rp, tt.rpExplicit)
			}
			if p.RetriesHandshakeTimeout() != tt.hsRetried {
				t.Errorf("handshake timeouts retried = %v, want %v", p.RetriesHandshakeTimeout(), tt.hsRetried)
			}
			if len(p.Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", p.Warnings, tt.warnings)
			}
			if tt.warningMatch != "" && !strings.Contains(strings.Join(p.Warnings, "|"), tt.warningMatch) {
				t.Errorf("warnings %q do not mention %q", p.Warnings, tt.warningMatch)
			}
			if !slices.Equal(got.IgnoredKeys, tt.ignoredKeys) {
				t.Errorf("ignored keys = %v, want %v", got.IgnoredKeys, tt.ignoredKeys)
			}
		})
	}
}

// A fragment part that cannot be decoded costs a warning, never the URL (Parse's
// contract): url.Parse alone would reject the whole URL for it.
func TestUndecodableFragmentIsAWarning(t *testing.T) {
	t.Parallel()
	app, err := Parse("wss://a.example/ws#%zz&rc=1")
	if err != nil || app.Policy.RetryCount != 1 || len(app.Policy.Warnings) != 1 || app.URL.String() != "wss://a.example/ws" {
		t.Fatalf("Parse: %+v, %v", app, err)
	}
	hook, err := Resolve(app, "/g#100%")
	if err != nil || hook.URL.String() != "wss://a.example/g" || len(hook.Policy.Warnings) != 1 {
		t.Fatalf("Resolve: %+v, %v", hook, err)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"", "   ", "ftp://h/p", "file:///etc/passwd", "mailto:a@b", "h/p", "/relative#rc=1", "//h/p",
		"https://", "https:///path", "http:opaque",
		"https://[::1/p", "ht tp://h/p", "javascript:alert(1)",
		"http://127.0.0.1:99999/call", "ws://h:0/ws", "https://h:65536/",
	} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(raw)
			if !errors.Is(err, ErrInvalidURL) {
				t.Fatalf("Parse(%q) error = %v, want ErrInvalidURL", raw, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// docs/call-control.md §3, issue 13: a URL with user-info is refused wherever it is
// given (application, hook, relative hook "//u:p@host"), with an error that names
// the URL without the credentials.
func TestUserInfoRefused(t *testing.T) {
	t.Parallel()
	app := mustParse(t, "https://app.example.com/call")
	for _, raw := range []string{
		"https://alice:s3cr3t@app.example.com/call#rc=1", "wss://alice:s3cr3t@app.example.com/ws",
		"http://s3cr3t@app.example.com/", "https://alice:s3cr3t@app.example.com:99999/x", "https://alice:s3cr3t@app/%zz",
		"//alice:s3cr3t@other.example/x", "https://a:s3cr3t@b@app.example.com/",
	} {
		for name, parse := range map[string]func(string) (Target, error){"Parse": Parse, "Resolve": func(s string) (Target, error) { return Resolve(app, s) }} {
			_, err := parse(raw)
			if name == "Parse" && strings.HasPrefix(raw, "//") {
				continue // not absolute: refused anyway
			}
			if !errors.Is(err, ErrInvalidURL) || !errors.Is(err, ErrUserInfo) {
				t.Errorf("%s(%q) error = %v, want ErrInvalidURL and ErrUserInfo", name, raw, err)
				continue
			}
			if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "username and password") {
				t.Errorf("%s(%q) error %q echoes the credentials or does not say where they go", name, raw, err)
			}
		}
	}
	if got := Redact("https://alice:s3cr3t@app.example.com/x?y=a@b#rc=1"); got != "https://app.example.com/x?y=a@b#rc=1" {
		t.Errorf("Redact = %q", got)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	app := mustParse(t, "https://app.example.com/jambonz/call#rc=3&rp=5xx,ct")
	wsApp := mustParse(t, "wss://app.example.com/ws#rc=2&rp=ct")
	tests := []struct {
		name  string
		app   Target
		hook  string
		clean string
		rc    int
		rp    []Class
		own   bool // the hook's own fragment set the policy
	}{
		{"relative hook inherits the app policy", app, "/gather", "https://app.example.com/gather", 3, []Class{Status5xx, Connect}, false},
		{"path-relative hook", app, "action", "https://app.example.com/jambonz/action", 3, []Class{Status5xx, Connect}, false},
		{"relative hook with its own fragment wins", app, "/gather#rc=1&rp=rt", "https://app.example.com/gather", 1, []Class{ResponseTimeout}, true},
		{"relative hook with an unrelated fragment still inherits", app, "/gather#x=1", "https://app.example.com/gather", 3, []Class{Status5xx, Connect}, false},
		{"absolute hook without fragment gets its own defaults", app, "https://other.example.com/status", "https://other.example.com/status", 0, []Class{Connect}, false},
		{"absolute hook with fragment", app, "https://other.example.com/s#rc=2", "https://other.example.com/s", 2, []Class{Connect}, true},
		{"relative hook on a websocket app", wsApp, "/hook", "wss://app.example.com/hook", 2, []Class{Connect}, false},
		{"query kept, fragment dropped", app, "/g?x=1#rc=0", "https://app.example.com/g?x=1", 0, []Class{Connect}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tt.app, tt.hook)
			if err != nil {
				t.Fatal(err)
			}
			if got.Clean() != tt.clean {
				t.Errorf("clean = %q, want %q", got.Clean(), tt.clean)
			}
			if got.Policy.RetryCount != tt.rc || !slices.Equal(got.Policy.RetryOn, tt.rp) {
				t.Errorf("policy rc=%d rp=%v, want rc=%d rp=%v", got.Policy.RetryCount, got.Policy.RetryOn, tt.rc, tt.rp)
			}
			if got.OwnPolicy() != tt.own {
				t.Errorf("OwnPolicy = %v, want %v", got.OwnPolicy(), tt.own)
			}
		})
	}
	for _, bad := range []string{"", "ftp://x/y", "//h:70000/g", "/g%zz"} {
		if _, err := Resolve(app, bad); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("Resolve(%q) error = %v, want ErrInvalidURL", bad, err)
		}
	}
	if _, err := Resolve(Target{}, "/gather"); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("relative hook without app: error = %v", err)
	}
}

// mustParse is Parse of a URL the test knows to be valid.
func mustParse(t *testing.T, raw string) Target {
	t.Helper()
	target, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return target
}
