package nodeapi

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// seededAPI serves the API on a store holding two accounts (tokens "token-a" and
// "token-b") and the calls of seed.
func seededAPI(t *testing.T, clock *testkit.Clock, seed []nodestore.Call) *httptest.Server {
	t.Helper()
	store, err := sqlitenode.Open(t.Context(), filepath.Join(t.TempDir(), "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, sid := range []string{"a", "b"} {
		acct := nodestore.Account{Sid: "acct-" + sid, Name: "Account " + sid, WebhookSecret: "s", CreatedAt: clock.Now()}
		if err := store.PutAccount(t.Context(), nodestore.PutAccountParams{Account: acct, TokenHash: nodestore.HashToken("token-" + sid), Origin: nodestore.TokenFromAPI}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range seed {
		if err := store.SaveCall(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	m, err := calls.New(calls.Options{Store: store, Network: noNetwork{}, MaxCalls: 1, IdleLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	if err := Register(mux, Options{Store: store, Calls: m, CheckNoticeURL: transport.CallControlRules(false).CheckURL, Clock: clock}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(mux, zerolog.Nop()))
	t.Cleanup(srv.Close)
	return srv
}

func getJSON(t *testing.T, url, token string, out any) int {
	t.Helper()
	resp, _ := testkit.DoJSON(t, http.MethodGet, url, token, nil, nil, out)
	return resp.StatusCode
}

// GET /v1/Me names the account of the token, so a console signs in with the token
// alone; no token or an unknown one is 401.
func TestWhoami(t *testing.T) {
	t.Parallel()
	clock := testkit.NewClockAt(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	srv := seededAPI(t, clock, nil)
	var me struct {
		AccountSid string `json:"account_sid"`
		Name       string `json:"name"`
	}
	if code := getJSON(t, srv.URL+"/v1/Me", "token-b", &me); code != http.StatusOK || me.AccountSid != "acct-b" || me.Name != "Account b" {
		t.Fatalf("GET /v1/Me with token-b: %d %+v", code, me)
	}
	for _, token := range []string{"", "nobody's"} {
		if code := getJSON(t, srv.URL+"/v1/Me", token, nil); code != http.StatusUnauthorized {
			t.Errorf("GET /v1/Me with token %q: %d, want 401", token, code)
		}
	}
}

// CallStats counts the account's calls created since a time (default the last 24
// hours) by status, most frequent first; another account's calls are not counted,
// and another account's token gets 404.
func TestCallStats(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := testkit.NewClockAt(now)
	call := func(sid, acct, status string, age time.Duration) nodestore.Call {
		ended := now.Add(-age + time.Second)
		return nodestore.Call{CallSid: sid, AccountSid: acct, From: "a", To: "b", Direction: "inbound", CallStatus: status,
			CreatedAt: now.Add(-age), EndedAt: &ended}
	}
	srv := seededAPI(t, clock, []nodestore.Call{
		call("c1", "acct-a", "completed", time.Hour),
		call("c2", "acct-a", "completed", 2*time.Hour),
		call("c3", "acct-a", "failed", 3*time.Hour),
		call("c4", "acct-a", "no-answer", 25*time.Hour), // before the default window
		call("c5", "acct-b", "failed", time.Hour),
	})
	type stats struct {
		Since     time.Time         `json:"since"`
		Total     int               `json:"total"`
		ByStatus  []CallStatusCount `json:"by_status"`
		Truncated bool              `json:"truncated"`
	}
	var got stats
	if code := getJSON(t, srv.URL+"/v1/Accounts/acct-a/CallStats", "token-a", &got); code != http.StatusOK {
		t.Fatalf("CallStats: %d", code)
	}
	want := []CallStatusCount{{"completed", 2}, {"failed", 1}}
	if got.Total != 3 || len(got.ByStatus) != 2 || got.ByStatus[0] != want[0] || got.ByStatus[1] != want[1] || got.Truncated ||
		!got.Since.Equal(now.Add(-24*time.Hour)) {
		t.Fatalf("CallStats = %+v, want 3 calls %v since %v", got, want, now.Add(-24*time.Hour))
	}
	got = stats{}
	since := now.Add(-48 * time.Hour).Format(time.RFC3339)
	if code := getJSON(t, srv.URL+"/v1/Accounts/acct-a/CallStats?since="+since, "token-a", &got); code != http.StatusOK || got.Total != 4 || len(got.ByStatus) != 3 {
		t.Fatalf("CallStats since %s: %d %+v, want 4 calls in 3 statuses", since, code, got)
	}
	if code := getJSON(t, srv.URL+"/v1/Accounts/acct-a/CallStats", "token-b", nil); code != http.StatusNotFound {
		t.Errorf("account b's token on account a's CallStats: %d, want 404", code)
	}
	if code := getJSON(t, srv.URL+"/v1/Accounts/acct-a/CallStats?since=yesterday", "token-a", nil); code != http.StatusUnprocessableEntity {
		t.Errorf("since=yesterday: %d, want 422", code)
	}
}
