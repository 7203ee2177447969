package outboxapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// tokens are the API tokens of the tests: two accounts.
var tokens = map[string]outboxapi.Principal{
	"token-a": {Account: "acct_a", Actor: "tok_a"},
	"token-b": {Account: "acct_b", Actor: "tok_b"},
}

func authenticate(_ context.Context, token string) (outboxapi.Principal, error) {
	p, ok := tokens[token]
	if !ok {
		return outboxapi.Principal{}, outboxapi.ErrUnauthenticated
	}
	return p, nil
}

// receiver is a loopback webhook receiver answering from a script.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []*http.Request
	bodies  [][]byte
	at      []time.Time // when each request arrived
	answer  func(n int) int
	changed chan struct{}
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{answer: answer, changed: make(chan struct{}, 1)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, r)
		rc.bodies = append(rc.bodies, body)
		rc.at = append(rc.at, time.Now())
		rc.mu.Unlock()
		code := http.StatusNoContent
		if rc.answer != nil {
			code = rc.answer(n)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"n":`+itoa(n)+`}`)
		notify(rc.changed)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// env is an outbox on a fresh database, started, served by the API on loopback.
type env struct {
	t        *testing.T
	ob       *outbox.Outbox
	base     string
	recorded chan struct{} // notified after every recorded attempt
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "outbox.db"), sqlitestore.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	rules := transport.PublicOnly()
	rules.AllowLoopback = true
	rules.DenyHosts = []string{"blocked.example"}
	e := &env{t: t, recorded: make(chan struct{}, 1)}
	e.ob, err = outbox.Open(ctx, outbox.Config{Store: st, Egress: &rules, Observe: func(outbox.Delivery, outbox.Attempt) { notify(e.recorded) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := outboxapi.Handler(outboxapi.Config{Outbox: e.ob, Authenticate: authenticate, Egress: &rules}, "test", "1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	e.base = srv.URL
	t.Cleanup(func() {
		srv.Close()
		_ = e.ob.Close(ctx)
		_ = st.Close()
	})
	return e
}

// call sends a request with token and returns the status and the decoded body.
func (e *env) call(method, path, token string, body any) (int, map[string]any) {
	e.t.Helper()
	code, raw := e.raw(method, path, token, body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			e.t.Fatalf("%s %s: %d %q: %v", method, path, code, raw, err)
		}
	}
	return code, out
}

func (e *env) raw(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	req, err := testkit.JSONRequest(method, e.base+path, token, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	resp, raw, err := testkit.Exchange(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, raw
}

// must is call expecting want.
func (e *env) must(want int, method, path, token string, body any) map[string]any {
	e.t.Helper()
	code, out := e.call(method, path, token, body)
	if code != want {
		e.t.Fatalf("%s %s: %d %v, want %d", method, path, code, out, want)
	}
	return out
}

// waitFor checks cond after every recorded attempt until it holds, failing the test
// at a generous deadline.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-e.recorded:
		case <-deadline.C:
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (e *env) delivery(token, endpoint, id string) map[string]any {
	e.t.Helper()
	return e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+endpoint+"/deliveries/"+id, token, nil)
}
