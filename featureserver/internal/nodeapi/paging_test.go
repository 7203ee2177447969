package nodeapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// Paging through the calls with X-Next-Cursor while new calls are created: every
// call that existed before the listing began is listed exactly once, newest first,
// and Link rel=next names the same page as the cursor with the filters kept.
func TestCallListPagesStayStable(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	acct := n.createAccount("acme")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}))
	t.Cleanup(app.Close)
	calls := "/v1/Accounts/" + acct.AccountSid + "/Calls"
	start := func() string {
		t.Helper()
		var c struct {
			Sid string `json:"sid"`
		}
		if code, _, raw := n.do("POST", calls, acct.APIToken, testkit.WithSpeech(map[string]any{"call_hook": app.URL, "from": "a",
			"to": map[string]any{"type": "phone", "number": "b"}}), &c); code != http.StatusCreated {
			t.Fatalf("create call: %d %s", code, raw)
		}
		n.waitCall(acct, c.Sid)
		return c.Sid
	}
	before := map[string]bool{}
	for range 9 {
		before[start()] = true
	}
	seen := map[string]bool{}
	path := calls + "?limit=2&direction=outbound"
	pages := 0
	for path != "" {
		var page []CallView
		code, h, raw := n.do("GET", path, acct.APIToken, nil, &page)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, raw)
		}
		pages++
		for _, c := range page {
			if seen[c.CallSid] {
				t.Errorf("call %s listed twice", c.CallSid)
			}
			seen[c.CallSid] = true
			// Every timestamp of the API is to the millisecond, as the accounts' are.
			if !c.CreatedAt.Equal(c.CreatedAt.Truncate(time.Millisecond)) || c.EndedAt == nil || !c.EndedAt.Equal(c.EndedAt.Truncate(time.Millisecond)) {
				t.Errorf("call %s: created %v, ended %v; want milliseconds", c.CallSid, c.CreatedAt, c.EndedAt)
			}
		}
		start() // a newer call, between pages
		next := h.Get("X-Next-Cursor")
		link := h.Get("Link")
		if next == "" {
			if link != "" || len(page) > 2 {
				t.Errorf("last page: Link %q, %d calls", link, len(page))
			}
			break
		}
		want := "; rel=\"next\""
		if !strings.HasSuffix(link, want) || !strings.Contains(link, "cursor="+url.QueryEscape(next)) || !strings.Contains(link, "direction=outbound") {
			t.Errorf("Link %q, want the next page with cursor %s and the filter", link, next)
		}
		path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), ">"+want)
		if pages > 20 {
			t.Fatal("the listing does not end")
		}
	}
	for sid := range before {
		if !seen[sid] {
			t.Errorf("call %s, older than the listing, was skipped", sid)
		}
	}
	for sid := range seen {
		if !before[sid] && pages > 1 {
			// Only the first page may show a call created after the listing began
			// (none is created before it here).
			t.Errorf("call %s, created while paging, was listed", sid)
		}
	}
	if pages != 5 {
		t.Errorf("%d pages of 2 for 9 calls, want 5", pages)
	}
}
