package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/fragment"
)

// runCLI runs the real command line with the given environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

// wantExit stops the test unless the command exited with want, showing its output.
func wantExit(t *testing.T, code, want int, stdout, stderr string) {
	t.Helper()
	if code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
}

// explainJSON is the stable --json contract of `fragment explain`, as the tests read
// it: defined here, apart from fragment.Explanation.MarshalJSON, so that a change of
// the contract fails them.
type explainJSON struct {
	URL                     string   `json:"url"`
	CleanURL                string   `json:"clean_url"`
	Transport               string   `json:"transport"`
	RC                      int      `json:"rc"`
	RCDefault               bool     `json:"rc_default"`
	RP                      []string `json:"rp"`
	RPExplicit              bool     `json:"rp_explicit"`
	HandshakeTimeoutRetried bool     `json:"handshake_timeout_retried"`
	MaxAttempts             int      `json:"max_attempts"`
	DelaysMS                []int64  `json:"delays_ms"`
	TotalDelayMS            int64    `json:"total_delay_ms"`
	AttemptTimeoutMS        int64    `json:"attempt_timeout_ms"`
	AttemptsToFailure       int      `json:"attempts_to_failure"`
	TimeToFailureMS         int64    `json:"time_to_failure_ms"`
	IgnoredKeys             []string `json:"ignored_keys"`
	Warnings                []string `json:"warnings"`
}

func explainJSONOf(t *testing.T, env map[string]string, args ...string) explainJSON {
	t.Helper()
	code, stdout, stderr := runCLI(t, env, append([]string{"fragment", "explain", "--json"}, args...)...)
	wantExit(t, code, exitOK, stdout, stderr)
	// The keys promised by the contract must be present even when empty.
	return decodeJSONLine[explainJSON](t, stdout, "url", "clean_url", "transport", "rc", "rc_default", "rp", "rp_explicit",
		"handshake_timeout_retried", "max_attempts", "delays_ms", "total_delay_ms", "time_to_failure_ms", "warnings")
}

// decodeJSONLine checks a --json output: one line, one object decoding into T with no
// unknown field, and each of keys present and not null.
func decodeJSONLine[T any](t *testing.T, stdout string, keys ...string) T {
	t.Helper()
	var got T
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("--json must print one line, got %q", stdout)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode %q: %v", stdout, err)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(stdout), &raw)
	for _, k := range keys {
		if v, ok := raw[k]; !ok || v == nil {
			t.Errorf("key %q missing or null in %s", k, stdout)
		}
	}
	return got
}

func TestFragmentExplainJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url       string
		env       map[string]string
		flags     []string
		transport string
		rc        int
		rcDefault bool
		rp        []string
		explicit  bool
		hsRetried bool
		delays    []int64
		total     int64
		ttf       int64
		warnings  int
	}{
		{url: "wss://h/p#rc=5&rp=ct", transport: "websocket", rc: 5, rp: []string{"ct"}, explicit: true, hsRetried: true,
			delays: []int64{500, 1000, 2000, 4000, 6000}, total: 13500, ttf: 22500},
		{url: "wss://h/p", transport: "websocket", rc: 5, rcDefault: true, rp: []string{"ct"},
			delays: []int64{500, 1000, 2000, 4000, 6000}, total: 13500, ttf: 1500},
		{url: "wss://h/p#rc=0", transport: "websocket", rc: 0, rp: []string{"ct"}, delays: []int64{}, ttf: 1500},
		{url: "https://h/p", transport: "http", rc: 0, rcDefault: true, rp: []string{"ct"}, delays: []int64{}, ttf: 10000},
		{url: "https://h/p#rc=9&rp=5xx,bogus", transport: "http", rc: 5, rp: []string{"5xx"}, explicit: true,
			delays: []int64{500, 1000, 2000, 4000, 6000}, total: 13500, ttf: 10000, warnings: 2},
		{url: "https://h/p#rc=2&rp=ct", env: map[string]string{"JAMBONES_HTTP_TIMEOUT": "3000"}, transport: "http", rc: 2,
			rp: []string{"ct"}, explicit: true, delays: []int64{500, 1000}, total: 1500, ttf: 3*3000 + 1500},
		{url: "wss://h/p#rc=1&rp=ct", env: map[string]string{"JAMBONES_WS_HANDSHAKE_TIMEOUT_MS": "2000"}, transport: "websocket", rc: 1,
			rp: []string{"ct"}, explicit: true, hsRetried: true, delays: []int64{500}, total: 500, ttf: 4500},
		{url: "wss://h/p#rc=1&rp=ct", env: map[string]string{"JAMBONES_WS_HANDSHAKE_TIMEOUT_MS": "2000"}, flags: []string{"--ws-handshake-timeout=100ms"},
			transport: "websocket", rc: 1, rp: []string{"ct"}, explicit: true, hsRetried: true, delays: []int64{500}, total: 500, ttf: 700},
		{url: "https://h/p#rc=1&rp=ct", flags: []string{"--http-timeout", "250ms"}, transport: "http", rc: 1, rp: []string{"ct"}, explicit: true,
			delays: []int64{500}, total: 500, ttf: 1000},
		{url: "https://h/p#rc=1&rp=ct", flags: []string{"--http-timeout-ms", "250"}, transport: "http", rc: 1, rp: []string{"ct"}, explicit: true,
			delays: []int64{500}, total: 500, ttf: 1000},
		{url: "wss://h/p#rc=1&rp=ct", flags: []string{"--ws-handshake-timeout-ms=100"}, transport: "websocket", rc: 1, rp: []string{"ct"}, explicit: true,
			hsRetried: true, delays: []int64{500}, total: 500, ttf: 700},
	}
	for _, tt := range tests {
		t.Run(tt.url+strings.Join(tt.flags, ""), func(t *testing.T) {
			t.Parallel()
			got := explainJSONOf(t, tt.env, append(tt.flags, tt.url)...)
			if got.URL != tt.url || strings.Contains(got.CleanURL, "#") {
				t.Errorf("url %q clean %q", got.URL, got.CleanURL)
			}
			if got.Transport != tt.transport || got.RC != tt.rc || got.RCDefault != tt.rcDefault {
				t.Errorf("transport %s rc %d default %v", got.Transport, got.RC, got.RCDefault)
			}
			if !slices.Equal(got.RP, tt.rp) || got.RPExplicit != tt.explicit || got.HandshakeTimeoutRetried != tt.hsRetried {
				t.Errorf("rp %v explicit %v hs %v", got.RP, got.RPExplicit, got.HandshakeTimeoutRetried)
			}
			if got.MaxAttempts != tt.rc+1 || !slices.Equal(got.DelaysMS, tt.delays) || got.TotalDelayMS != tt.total {
				t.Errorf("max %d delays %v total %d", got.MaxAttempts, got.DelaysMS, got.TotalDelayMS)
			}
			if got.TimeToFailureMS != tt.ttf {
				t.Errorf("time to failure %d, want %d", got.TimeToFailureMS, tt.ttf)
			}
			if len(got.Warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", got.Warnings, tt.warnings)
			}
		})
	}
}

func TestFragmentExplainHuman(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, nil, "fragment", "explain", "wss://h/p#rc=5&rp=ct")
	wantExit(t, code, exitOK, stdout, stderr)
	for _, want := range []string{"websocket", "handshake timeouts  retried", "500ms, 1s, 2s, 4s, 6s (total 13.5s)", "22.5s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestFragmentExplainRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		mention string
	}{
		{"malformed URL", nil, []string{"fragment", "explain", "https://[::1/p"}, "invalid application URL"},
		{"bad scheme", nil, []string{"fragment", "explain", "ftp://h/p"}, "unsupported scheme"},
		{"relative URL", nil, []string{"fragment", "explain", "/call#rc=1"}, "not absolute"},
		{"host:port without a scheme", nil, []string{"fragment", "explain", "127.0.0.1:3000/call#rc=1"}, `"127.0.0.1:3000/call#rc=1" is not absolute (want http://, https://, ws:// or wss:// before the host)`},
		{"bad path escape", nil, []string{"fragment", "explain", "https://h/p%zz#rc=1"}, "invalid URL escape"},
		{"no URL", nil, []string{"fragment", "explain"}, "exactly one URL"},
		{"two URLs", nil, []string{"fragment", "explain", "https://a/", "https://b/"}, "exactly one URL"},
		{"bad env value", map[string]string{"JAMBONES_HTTP_TIMEOUT": "ten"}, []string{"fragment", "explain", "https://h/p"}, "JAMBONES_HTTP_TIMEOUT"},
		{"negative env value", map[string]string{"JAMBONES_WS_HANDSHAKE_TIMEOUT_MS": "-5"}, []string{"fragment", "explain", "wss://h/p"}, "JAMBONES_WS_HANDSHAKE_TIMEOUT_MS"},
		{"bad flag value", nil, []string{"fragment", "explain", "--http-timeout=0", "https://h/p"}, "--http-timeout"},
		{"flag above the variable's range", nil, []string{"fragment", "explain", "--http-timeout=700s", "https://h/p"}, "600000"},
		{"unknown flag", nil, []string{"fragment", "explain", "--bogus", "https://h/p"}, "unknown flag"},
		{"unknown command", nil, []string{"frobnicate"}, "unknown command"},
		{"unknown fragment subcommand", nil, []string{"fragment", "frobnicate"}, "unknown command"},
		{"-ms flag named as given", nil, []string{"fragment", "explain", "--ws-handshake-timeout-ms=200000", "wss://h/p"}, "--ws-handshake-timeout-ms=\"3m20s\" is invalid"},
		{"timeout not a duration", nil, []string{"fragment", "explain", "--http-timeout=2sec", "https://h/p"}, "want a duration such as 1500ms"},
		{"timeout without its unit", nil, []string{"fragment", "explain", "--http-timeout=2500", "https://h/p"}, "a duration needs its unit: 2500s, 2500ms or 2500m"},
		{"timeout below a millisecond", nil, []string{"fragment", "explain", "--ws-handshake-timeout=1.5ms", "wss://h/p"}, "--ws-handshake-timeout=1.5ms: want whole milliseconds"},
		{"serve flag named, not its variable", nil, []string{"serve", "--listen", "bogus"}, "--listen=\"bogus\""},
		{"serve variable named", map[string]string{"SWITCHBOARD_LISTEN": "bogus"}, []string{"serve"}, "SWITCHBOARD_LISTEN"},
		{"unknown bench subcommand", nil, []string{"bench", "frobnicate"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, tt.env, tt.args...)
			wantExit(t, code, exitUsage, stdout, stderr)
			if stdout != "" {
				t.Errorf("nothing may be printed on stdout, got %q", stdout)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tt.mention) {
				t.Errorf("want a one-line error mentioning %q, got %q", tt.mention, stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCLI(t, nil, "version")
	if code != exitOK || !strings.HasPrefix(stdout, "switchboard ") {
		t.Fatalf("exit %d output %q", code, stdout)
	}
}

// Each warning is printed once: in the explanation, not logged again on stderr.
func TestFragmentExplainWarnsOnce(t *testing.T) {
	const url = "https://h/p#rc=abc&rp=nonsense"
	code, stdout, stderr := runCLI(t, nil, "fragment", "explain", url)
	wantExit(t, code, exitOK, stdout, stderr)
	target, err := fragment.Parse(url)
	if err != nil || len(target.Policy.Warnings) == 0 {
		t.Fatalf("the URL should warn: %v, %v", target.Policy.Warnings, err)
	}
	for _, w := range target.Policy.Warnings {
		if n := strings.Count(stdout+stderr, w); n != 1 {
			t.Errorf("warning %q printed %d times:\n%s\n%s", w, n, stdout, stderr)
		}
	}
}

// The timeout flags are durations like serve's: 2s, 1500ms, and the hidden -ms
// spellings (a bare number of milliseconds); a flag wins over the variable.
func TestFragmentExplainTimeoutFlagsAreDurations(t *testing.T) {
	t.Parallel()
	env := map[string]string{"JAMBONES_HTTP_TIMEOUT": "7000", "JAMBONES_WS_HANDSHAKE_TIMEOUT_MS": "900"}
	tests := []struct {
		url  string
		args []string
		want int64 // attempt_timeout_ms
	}{
		{"https://h/p#rc=1", nil, 7000},
		{"https://h/p#rc=1", []string{"--http-timeout", "2s"}, 2000},
		{"https://h/p#rc=1", []string{"--http-timeout=1500ms"}, 1500},
		{"https://h/p#rc=1", []string{"--http-timeout-ms=2500"}, 2500},
		{"https://h/p#rc=1", []string{"--http-timeout-ms=3000"}, 3000},
		{"https://h/p#rc=1", []string{"--http-timeout-ms=4s"}, 4000},
		{"wss://h/p#rc=1", nil, 900},
		{"wss://h/p#rc=1", []string{"--ws-handshake-timeout", "2s"}, 2000},
		{"wss://h/p#rc=1", []string{"--ws-handshake-timeout-ms=250"}, 250},
		{"wss://h/p#rc=1", []string{"--ws-handshake-timeout-ms=300"}, 300},
		{"wss://h/p#rc=1", []string{"--http-timeout=2s"}, 900},
	}
	for _, tt := range tests {
		got := explainJSONOf(t, env, append(tt.args, tt.url)...)
		if got.AttemptTimeoutMS != tt.want {
			t.Errorf("%v %s: attempt_timeout_ms %d, want %d", tt.args, tt.url, got.AttemptTimeoutMS, tt.want)
		}
	}
	code, stdout, stderr := runCLI(t, nil, "fragment", "explain", "--help")
	help := stdout + stderr
	if code != exitOK || !strings.Contains(help, "--http-timeout duration") || !strings.Contains(help, "--ws-handshake-timeout duration") || strings.Contains(help, "-ms") {
		t.Errorf("help (exit %d) must show duration flags and hide the -ms spellings:\n%s", code, help)
	}
}
