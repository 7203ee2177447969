package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// serve's flags are typed (durations as durations with their unit; counts as
// integers), win over the environment, keep their -ms spellings (a bare number of
// milliseconds), and a bad value is a usage error naming the flag.
func TestServeTypedFlags(t *testing.T) {
	code, stdout, stderr := runCLI(t, map[string]string{"JAMBONES_HTTP_TIMEOUT": "9000"}, "serve", "--print-config",
		"--drain-timeout", "2s", "--call-idle-timeout", "90s", "--call-retention", "48h", "--http-timeout", "1500ms",
		"--ws-ping-interval", "1m", "--max-calls", "7")
	wantExit(t, code, exitOK, stdout, stderr)
	for _, want := range []string{"SWITCHBOARD_DRAIN_TIMEOUT_MS              2000", "SWITCHBOARD_CALL_IDLE_TIMEOUT_MS          90000",
		"SWITCHBOARD_CALL_RETENTION_HOURS          48", "JAMBONES_HTTP_TIMEOUT                     1500",
		"JAMBONES_WS_PING_INTERVAL_MS              60000", "SWITCHBOARD_MAX_CALLS                     7"} {
		if !strings.Contains(squeeze(stdout), squeeze(want)) {
			t.Errorf("print-config lacks %q:\n%s", want, stdout)
		}
	}
	if code, stdout, stderr := runCLI(t, nil, "serve", "--print-config", "--drain-timeout-ms", "15000"); code != exitOK || !strings.Contains(squeeze(stdout), "SWITCHBOARD_DRAIN_TIMEOUT_MS 15000") {
		t.Errorf("the -ms spelling: exit %d, %s%s", code, stdout, stderr)
	}
	for _, tc := range []struct{ args, mention string }{
		{"--call-retention=90m", "--call-retention=1h30m0s: want whole hours"},
		{"--drain-timeout=soon", "--drain-timeout"},
		{"--drain-timeout=5", `invalid argument "5" for "--drain-timeout" flag: a duration needs its unit: 5s, 5ms or 5m`},
		{"--node-lease=15000", "a duration needs its unit"},
		{"--max-calls=many", "--max-calls"},
		{"--http-timeout=0", `--http-timeout="0s" is invalid`},
		{"--drain-timeout-ms=7200000", `--drain-timeout-ms="2h0m0s" is invalid`},
	} {
		code, _, stderr := runCLI(t, nil, "serve", "--print-config", tc.args)
		if code != exitUsage || !strings.Contains(stderr, tc.mention) {
			t.Errorf("serve %s: exit %d, %q; want a usage error mentioning %q", tc.args, code, stderr, tc.mention)
		}
	}
}

// A refused secret given as a flag is shown as the configuration masks it (as its
// variable would be), never as given, in a message that reads.
func TestServeFlagErrorsHideSecrets(t *testing.T) {
	for _, tc := range []struct{ args, secret, mention string }{
		{"--admin-token=S3cretTok", "S3cretTok", "--admin-token"},
		{"--smtp-url=smtp://user:S3cretPW@mail.example.com:25?bogus=1", "S3cretPW", "--smtp-url"},
		{"--database-url=postgres://u:S3cretPW@h:99999999/db", "S3cretPW", "--database-url"},
		{"--database-url=mysql://u:S3cretPW@h/db", "S3cretPW", "--database-url"},
	} {
		code, stdout, stderr := runCLI(t, nil, "serve", "--print-config", tc.args)
		if code != exitUsage || !strings.Contains(stderr, tc.mention) {
			t.Errorf("serve %s: exit %d, %q; want a usage error naming %s", tc.args, code, stderr, tc.mention)
		}
		if strings.Contains(stdout+stderr, tc.secret) {
			t.Errorf("serve %s printed the secret: %s%s", tc.args, stdout, stderr)
		}
		if strings.Contains(stderr, "want want") || strings.Contains(stderr, "want not") {
			t.Errorf("serve %s: %q does not read", tc.args, stderr)
		}
	}
}

// simulate and test take the JAMBONES_* settings as flags too.
func TestSimulateCallControlFlags(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","text":"hi"},{"verb":"hangup"}]`))
	}))
	defer app.Close()
	code, stdout, stderr := runCLI(t, map[string]string{"JAMBONES_HTTP_USER_AGENT_HEADER": "from-env"}, "simulate", "--json", "--http-user-agent", "from-flag", app.URL)
	wantExit(t, code, exitOK, stdout, stderr)
	mu.Lock()
	if len(agents) == 0 || agents[0] != "from-flag" {
		t.Errorf("User-Agent %v, want the flag's", agents)
	}
	mu.Unlock()
	for _, cmd := range []string{"simulate", "test"} {
		code, _, stderr := runCLI(t, nil, cmd, "--ws-handshake-timeout=0", app.URL)
		if code != exitUsage || !strings.Contains(stderr, "--ws-handshake-timeout") {
			t.Errorf("%s with a bad flag: exit %d, %q; want a usage error naming it", cmd, code, stderr)
		}
	}
}

// squeeze collapses runs of spaces, so that tabwriter's padding does not matter.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }
