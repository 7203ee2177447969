package nodeapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

var update = flag.Bool("update", false, "rewrite testdata/openapi.json from the API as it is")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noNetwork serves APIs whose tests start no call.
type noNetwork struct{}

func (noNetwork) CallOptions(appURL string) callctl.Options { return callctl.Options{AppURL: appURL} }
func (noNetwork) CloseIdleConnections()                     {}

// serveAPI serves the API on a fresh store over loopback.
func serveAPI(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	return serveAPILogged(t, o, zerolog.Nop())
}

// serveAPILogged is serveAPI with log as the access log.
func serveAPILogged(t *testing.T, o Options, log zerolog.Logger) *httptest.Server {
	t.Helper()
	store, err := sqlitenode.Open(t.Context(), filepath.Join(t.TempDir(), "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	m, err := calls.New(calls.Options{Store: store, Network: noNetwork{}, MaxCalls: 1, IdleLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o.Store, o.Calls, o.CheckNoticeURL = store, m, transport.CallControlRules(false).CheckURL
	mux := http.NewServeMux()
	if err := Register(mux, o); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(mux, log))
	t.Cleanup(srv.Close)
	return srv
}

// The OpenAPI document is a contract of the API: it changes only on purpose, with
// testdata/openapi.json rewritten by `go test -update`.
func TestOpenAPIDocument(t *testing.T) {
	got := openAPIDocument(t)
	golden := filepath.Join("testdata", "openapi.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the OpenAPI document changed (go test -update rewrites %s when that is meant):\n%s", golden, firstDifference(got, want))
	}
}

// openAPIDocument is the document a node serves at /openapi.json.
func openAPIDocument(t *testing.T) []byte {
	t.Helper()
	srv := serveAPI(t, Options{Version: "test"})
	resp, err := http.Get(srv.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d, %v", resp.StatusCode, err)
	}
	return doc
}

// firstDifference shows where two documents part.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-80, 0)
	return "got  …" + string(got[from:min(i+80, len(got))]) + "\nwant …" + string(want[from:min(i+80, len(want))])
}

// Register refuses options without a store, a call manager or a notice URL check,
// naming each.
func TestRegisterReportsEveryMissingOption(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	err := Register(mux, Options{})
	for _, field := range []string{"Options.Store", "Options.Calls", "Options.CheckNoticeURL"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("error %v does not name %s", err, field)
		}
	}
	if _, pattern := mux.Handler(httptest.NewRequest("GET", "/openapi.json", nil)); pattern != "" {
		t.Fatal("a refused Register put routes on the mux")
	}
}

// Rejected values are echoed in problem documents unless they could hold a secret.
func TestSafeToEcho(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		location string
		value    any
		want     bool
	}{
		{"body.name", "x", true},
		{"body.call_hook.url", "ftp://h/", true},
		{"body.call_hook.password", "hunter2", false},
		{"body.webhook_secret", "s", false},
		{"header.api_token", "t", false},
		{"body.call_hook", map[string]any{"password": "hunter2"}, false},
		{"body.tag", []any{1}, false},
		{"body.limit", nil, true},
		{"body.limit", 5, true},
	} {
		if got := safeToEcho(tt.location, tt.value); got != tt.want {
			t.Errorf("safeToEcho(%q, %v) = %v, want %v", tt.location, tt.value, got, tt.want)
		}
	}
}

// The document holds what redocly's recommended rules ask (.ci/run lints the one a
// node serves): a bearer scheme required everywhere, a server, a license, a 4xx
// answer per operation, typed timeline items, and no empty string in an enum.
func TestOpenAPIDocumentLintable(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument(t), &doc); err != nil {
		t.Fatal(err)
	}
	get := func(v any, keys ...string) any {
		for _, k := range keys {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v
	}
	if get(doc, "components", "securitySchemes", "bearer", "scheme") != "bearer" || doc["security"] == nil || doc["servers"] == nil || get(doc, "info", "license", "name") != "Apache-2.0" {
		t.Errorf("security %v, schemes %v, servers %v, license %v", doc["security"], get(doc, "components", "securitySchemes"), doc["servers"], get(doc, "info", "license"))
	}
	if get(doc, "components", "schemas", "CallView", "properties", "timeline", "items", "type") != "object" {
		t.Errorf("timeline items untyped: %v", get(doc, "components", "schemas", "CallView", "properties", "timeline"))
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			has4xx := false
			for code := range get(op, "responses").(map[string]any) {
				has4xx = has4xx || strings.HasPrefix(code, "4")
			}
			if !has4xx {
				t.Errorf("%s %s declares no 4xx answer", method, path)
			}
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if enum, ok := v["enum"].([]any); ok && slices.Contains(enum, any("")) {
				t.Errorf("%s: an enum holds \"\"", path)
			}
			for k, sub := range v {
				walk(path+"/"+k, sub)
			}
		case []any:
			for _, sub := range v {
				walk(path, sub)
			}
		}
	}
	walk("", doc)
}

// Every request gets an id, echoed as X-Request-Id (a sane one of the client's is
// kept), and one access log line naming it with the method, path and status.
func TestAccessLogAndRequestID(t *testing.T) {
	var logs testkit.SyncBuffer
	srv := serveAPILogged(t, Options{}, zerolog.New(&logs))
	get := func(id string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/Accounts/nope/Calls", nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("X-Request-Id")
	}
	own := get("")
	if len(own) != 36 {
		t.Errorf("X-Request-Id %q, want a fresh id", own)
	}
	if got := get("client-id-1"); got != "client-id-1" {
		t.Errorf("the client's id came back as %q", got)
	}
	if got := get("bad id"); got == "bad id" || len(got) != 36 {
		t.Errorf("a bad client id came back as %q, want one of ours", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d access log lines, want 3:\n%s", len(lines), logs.String())
	}
	var first struct {
		Level, Message, Method, Path string
		RequestID                    string `json:"request_id"`
		Status                       int
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.RequestID != own || first.Method != "GET" ||
		first.Path != "/v1/Accounts/nope/Calls" || first.Status != http.StatusUnauthorized || first.Level != "info" {
		t.Errorf("access log line %s, want request %s, GET, the path, 401", lines[0], own)
	}
}
