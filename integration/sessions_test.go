package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// signInClient signs in to the console without following the sign-in's redirect,
// over connections kept alive for the workers of a flood.
var signInClient = &http.Client{
	Transport:     &http.Transport{MaxIdleConnsPerHost: 32},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// consoleSignIn signs in to p's console with token, as the client at forwardedFor
// when it is set (the node trusts loopback as its proxy), and returns the session
// cookie's value, or "" and the status when the node opened no session.
func consoleSignIn(p *serveProcess, token, forwardedFor string) (string, int, error) {
	req, err := http.NewRequest("POST", p.base+"/console/signin", strings.NewReader(url.Values{"token": {token}}.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", forwardedFor)
	}
	resp, err := signInClient.Do(req)
	if err != nil {
		return "", 0, err
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "switchboard_session" && c.Value != "" && resp.StatusCode == http.StatusSeeOther {
			return c.Value, resp.StatusCode, nil
		}
	}
	return "", resp.StatusCode, nil
}

// consoleSignedIn reports whether cookie's session is served a console page (200),
// rather than sent to sign in.
func consoleSignedIn(p *serveProcess, cookie string) (bool, error) {
	req, err := http.NewRequest("GET", p.base+"/console/endpoints", nil)
	if err != nil {
		return false, err
	}
	req.AddCookie(&http.Cookie{Name: "switchboard_session", Value: cookie})
	resp, err := signInClient.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// wantSignedIn fails the test unless cookie's session is served a console page.
func wantSignedIn(t *testing.T, p *serveProcess, cookie string, signedIn bool, what string) {
	t.Helper()
	got, err := consoleSignedIn(p, cookie)
	if err != nil {
		t.Fatal(err)
	}
	if got != signedIn {
		t.Fatalf("%s: signed in %v, want %v", what, got, signedIn)
	}
}

// 20,000 console sign-ins of account B, each from a client address of its own (B's
// user, or a botnet, behind the load balancer the node trusts), through the real
// binary on SQLite with its default limits, never end account A's sessions: A's page
// is served throughout and after, A's session left idle meanwhile still works, B's
// latest session works, and B's first one was
// ended by B's own bound (docs/security.md §2). Successful sign-ins are never
// limited (docs/security.md §4), so the per-address budget is no part of this; the
// distinct addresses make the limiter remember 20,000 clients known to B, which must
// not disturb anyone either. The feature-server package's test makes the same
// check in-process under the race detector, with fewer sign-ins.
func TestSignInsOfOneAccountNeverEndAnothersThroughServe(t *testing.T) {
	t.Parallel()
	// On /dev/shm when there is one: what is measured is who loses a session, not
	// how fast a loaded disk syncs 20,000 commits.
	db := filepath.Join(memoryDir(t), "node.db")
	p := startServe(t, db, "SWITCHBOARD_TRUSTED_PROXIES=127.0.0.0/8")
	a, b := p.account(), p.account()
	// A has two sessions: one used throughout the flood, one left idle (the first a
	// node-wide bound by last use would end).
	aIdle, code, err := consoleSignIn(p, a.APIToken, "192.0.2.1")
	if err != nil || aIdle == "" {
		t.Fatalf("A's sign-in: %d %v", code, err)
	}
	aCookie, code, err := consoleSignIn(p, a.APIToken, "192.0.2.1")
	if err != nil || aCookie == "" {
		t.Fatalf("A's second sign-in: %d %v", code, err)
	}
	bFirst, code, err := consoleSignIn(p, b.APIToken, "192.0.2.2")
	if err != nil || bFirst == "" {
		t.Fatalf("B's first sign-in: %d %v", code, err)
	}

	const signIns, workers, checkEvery = 20_000, 16, 1_000
	start := time.Now()
	var next, refused atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var aLost atomic.Int64 // the sign-in count at which A was first sent to sign in
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > signIns {
					return
				}
				// 10.0.0.0/8 holds every client once: 10.x.y.z from n.
				client := fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
				cookie, code, err := consoleSignIn(p, b.APIToken, client)
				if err != nil {
					errOnce.Do(func() { firstErr = err })
					refused.Add(1)
					continue
				}
				if cookie == "" {
					errOnce.Do(func() { firstErr = fmt.Errorf("sign-in %d from %s answered %d without a session", n, client, code) })
					refused.Add(1)
				}
				if n%checkEvery == 0 {
					if ok, err := consoleSignedIn(p, aCookie); err != nil {
						errOnce.Do(func() { firstErr = err })
						refused.Add(1)
					} else if !ok {
						aLost.CompareAndSwap(0, n)
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d sign-ins of B in %s (%.0f/s)", signIns, time.Since(start).Round(time.Millisecond), signIns/time.Since(start).Seconds())
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of B's sign-ins or A's checks failed; the first: %v", n, firstErr)
	}
	if n := aLost.Load(); n > 0 {
		t.Fatalf("A's session was ended by the time of B's sign-in %d", n)
	}
	wantSignedIn(t, p, aCookie, true, "A's session after 20,000 sign-ins of B")
	wantSignedIn(t, p, aIdle, true, "A's idle session after 20,000 sign-ins of B")
	bLatest, code, err := consoleSignIn(p, b.APIToken, "192.0.2.2")
	if err != nil || bLatest == "" {
		t.Fatalf("B's latest sign-in: %d %v", code, err)
	}
	wantSignedIn(t, p, bLatest, true, "B's latest session")
	wantSignedIn(t, p, bFirst, false, "B's first session after 20,000 more (the account's bound)")
}

// memoryDir is a fresh directory on /dev/shm (a tmpfs) when there is one, else on
// the disk (t.TempDir), removed when the test ends.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "switchboard-integration-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
