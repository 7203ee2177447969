package featureserver

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
)

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// consoleSignIn signs in to n's console with token and returns the session cookie's
// value.
func consoleSignIn(t *testing.T, base, token string) string {
	t.Helper()
	resp, err := noRedirects.PostForm(base+"/console/signin", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "switchboard_session" && c.Value != "" {
			return c.Value
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", resp.StatusCode)
	return ""
}

// consolePage gets a console page with the session cookie: 200 when signed in, a
// redirect (303 and its Location) when not.
func consolePage(t *testing.T, base, cookie, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.AddCookie(&http.Cookie{Name: "switchboard_session", Value: cookie})
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func wantSignedIn(t *testing.T, base, cookie, what string) {
	t.Helper()
	if code, loc := consolePage(t, base, cookie, "/console/endpoints"); code != http.StatusOK {
		t.Fatalf("%s: %d (to %q), want the page", what, code, loc)
	}
}

func wantSignedOut(t *testing.T, base, cookie, what, location string) {
	t.Helper()
	if code, loc := consolePage(t, base, cookie, "/console/endpoints"); code != http.StatusSeeOther || loc != location {
		t.Fatalf("%s: %d to %q, want a redirect to %s", what, code, loc, location)
	}
}

// A console session is kept in the node's database: it survives a restart of the
// node (SQLite).
func TestConsoleSessionSurvivesARestart(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	cookie := consoleSignIn(t, n.base, acct.APIToken)
	wantSignedIn(t, n.base, cookie, "after sign-in")
	n.stop()
	again := startNodeOn(t, n)
	wantSignedIn(t, again.base, cookie, "after a restart")
}

// On PostgreSQL a session opened on one node works on another, and signing out on
// that one ends it on the first.
func TestConsoleSessionWorksOnEveryNodeOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	a := runNode(t, pgConfig(t, dbURL, "node-a"))
	b := runNode(t, pgConfig(t, dbURL, "node-b"))
	acct := a.createAccount("acme")
	cookie := consoleSignIn(t, a.base, acct.APIToken)
	wantSignedIn(t, b.base, cookie, "a session of node a on node b")
	req, _ := http.NewRequest("GET", b.base+"/console/", nil)
	req.AddCookie(&http.Cookie{Name: "switchboard_session", Value: cookie})
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	csrf := between(page, `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatal("no form token on node b's page")
	}
	form := url.Values{"csrf": {csrf}}
	out, _ := http.NewRequest("POST", b.base+"/console/signout", strings.NewReader(form.Encode()))
	out.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	out.AddCookie(&http.Cookie{Name: "switchboard_session", Value: cookie})
	if resp, err := noRedirects.Do(out); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out on node b: %v %v", resp, err)
	}
	wantSignedOut(t, a.base, cookie, "node a after signing out on node b", "/console/signin")
}

// 20,000 sign-ins of account B (2,000 under the race detector) end only B's own oldest sessions: account A's
// session keeps working, and so do B's most recent ones. The sign-ins go through
// the node's handler in-process (the console's sign-in, the API's check of the
// token, the session's write), as many at once as a loaded machine runs well. The
// integration package makes all 20,000 through the serve binary, built without the
// race detector, over HTTP from as many client addresses.
func TestSignInsOfOneAccountNeverEndAnothers(t *testing.T) {
	t.Parallel()
	// What is measured is who loses a session, not the disk: in memory when the
	// machine has a tmpfs at /dev/shm, 20,000 syncs of a loaded disk need not be
	// waited for.
	n := startNode(t, func(c *Config) { c.DatabaseURL = "sqlite:" + filepath.Join(memoryDir(t), "node.db") })
	a, b := n.createAccount("a"), n.createAccount("b")
	aCookie := consoleSignIn(t, n.base, a.APIToken)
	signIns, workers := int64(20_000), 16
	if raceDetector {
		// Still 100 times the account's bound; 20,000 in-process sign-ins cost
		// minutes of CPU under the detector (SQLite's C, translated to Go, is
		// instrumented too) on a shared 2-core machine.
		signIns = 2_000
	}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	body := url.Values{"token": {b.APIToken}}.Encode()
	handler := n.node.server.Handler
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= signIns {
				req := httptest.NewRequest("POST", "/console/signin", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusSeeOther {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of B's sign-ins failed", f)
	}
	wantSignedIn(t, n.base, aCookie, fmt.Sprintf("A's session after %d sign-ins of B", signIns))
	bCookie := consoleSignIn(t, n.base, b.APIToken)
	wantSignedIn(t, n.base, bCookie, "B's latest session")
}

// A session ends when unused for the idle timeout, past its absolute lifetime,
// and when the API token it was opened with is rotated.
func TestConsoleSessionEnds(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	acct := n.createAccount("acme")
	ctx := context.Background()
	setSession := func(cookie, column string, at time.Time) {
		t.Helper()
		if err := n.node.db.sqlite.WriteTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE fs_console_sessions SET `+column+` = ? WHERE id_hash = ?`, at.UnixMilli(), nodestore.HashToken(cookie))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("idle", func(t *testing.T) {
		cookie := consoleSignIn(t, n.base, acct.APIToken)
		setSession(cookie, "last_seen_at", time.Now().Add(-consoleSessionIdle+time.Minute))
		wantSignedIn(t, n.base, cookie, "used within the idle timeout")
		setSession(cookie, "last_seen_at", time.Now().Add(-consoleSessionIdle))
		wantSignedOut(t, n.base, cookie, "unused for the idle timeout", "/console/signin?done=expired")
	})
	t.Run("lifetime", func(t *testing.T) {
		cookie := consoleSignIn(t, n.base, acct.APIToken)
		setSession(cookie, "expires_at", time.Now())
		wantSignedOut(t, n.base, cookie, "past its lifetime, used a moment ago", "/console/signin?done=expired")
	})
	t.Run("token rotated", func(t *testing.T) {
		cookie := consoleSignIn(t, n.base, acct.APIToken)
		var rotated struct {
			APIToken string `json:"api_token"`
		}
		if code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/ApiToken", testAdminToken, nil, &rotated); code != http.StatusCreated {
			t.Fatalf("rotate: %d %s", code, raw)
		}
		wantSignedOut(t, n.base, cookie, "after the token was rotated", "/console/signin")
		if _, err := n.node.store.GetSession(ctx, nodestore.HashToken(cookie)); err == nil {
			t.Error("the rotated token's session is still stored")
		}
		wantSignedIn(t, n.base, consoleSignIn(t, n.base, rotated.APIToken), "a session of the new token")
	})
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// between is the text of s after the first start up to the next end, or "".
func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, end)
	return v
}

// memoryDir is a fresh directory on /dev/shm (a tmpfs) when there is one, else on
// the disk (t.TempDir), removed when the test ends.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "switchboard-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
