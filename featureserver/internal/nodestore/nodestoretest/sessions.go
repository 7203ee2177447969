package nodestoretest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

func session(id, account, tokenHash string, seen time.Time) nodestore.Session {
	return nodestore.Session{IDHash: nodestore.HashToken(id), AccountSid: account, TokenHash: tokenHash,
		CreatedAt: t0, LastSeenAt: seen, ExpiresAt: t0.Add(12 * time.Hour)}
}

func mustCreateSession(t *testing.T, s nodestore.Store, ss nodestore.Session, limit int) {
	t.Helper()
	if err := s.CreateSession(ctx, nodestore.CreateSessionParams{Session: ss, MaxPerAccount: limit}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
}

// testSessions: a session reads back as created and touched; sign-out deletes it;
// an unknown account's session is ErrNotFound and stores nothing.
func testSessions(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a")
	ss := session("one", "a", nodestore.HashToken("tok"), t0)
	mustCreateSession(t, s, ss, 10)
	if got, err := s.GetSession(ctx, ss.IDHash); err != nil || got != ss {
		t.Fatalf("GetSession: %+v, %v; want %+v", got, err, ss)
	}
	if err := s.TouchSession(ctx, nodestore.TouchSessionParams{IDHash: ss.IDHash, At: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	ss.LastSeenAt = t0.Add(time.Minute)
	if got, err := s.GetSession(ctx, ss.IDHash); err != nil || got != ss {
		t.Fatalf("touched: %+v, %v; want %+v", got, err, ss)
	}
	if err := s.DeleteSession(ctx, ss.IDHash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, ss.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a deleted session: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSession(ctx, ss.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
	if err := s.TouchSession(ctx, nodestore.TouchSessionParams{IDHash: ss.IDHash, At: t0}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("touching a deleted session: %v, want ErrNotFound", err)
	}
	orphan := session("orphan", "nobody", "", t0)
	if err := s.CreateSession(ctx, nodestore.CreateSessionParams{Session: orphan, MaxPerAccount: 10}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a session of no account: %v, want ErrNotFound", err)
	}
	if _, err := s.GetSession(ctx, orphan.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("the refused session was stored: %v", err)
	}
}

// testSessionLimit: past its bound an account loses its own least recently used
// sessions, never another account's.
func testSessionLimit(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	aSession := session("a's", "a", "", t0)
	mustCreateSession(t, s, aSession, 3)
	var b []nodestore.Session
	for i := range 10 {
		ss := session(fmt.Sprint("b", i), "b", "", t0.Add(time.Duration(i)*time.Second))
		mustCreateSession(t, s, ss, 3)
		b = append(b, ss)
	}
	if _, err := s.GetSession(ctx, aSession.IDHash); err != nil {
		t.Fatalf("b's sign-ins ended a's session: %v", err)
	}
	for i, ss := range b {
		_, err := s.GetSession(ctx, ss.IDHash)
		if kept := i >= len(b)-3; kept && err != nil || !kept && !errors.Is(err, nodestore.ErrNotFound) {
			t.Errorf("b's session %d: %v (the 3 most recently used stay)", i, err)
		}
	}
	// A touch makes an old session recent: the next sign-in ends another one.
	if err := s.TouchSession(ctx, nodestore.TouchSessionParams{IDHash: b[7].IDHash, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mustCreateSession(t, s, session("b-new", "b", "", t0.Add(time.Hour+time.Second)), 3)
	if _, err := s.GetSession(ctx, b[7].IDHash); err != nil {
		t.Errorf("the session used last was ended: %v", err)
	}
	if _, err := s.GetSession(ctx, b[8].IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("the least recently used session stayed: %v", err)
	}
}

// testSessionsEndWithTheirToken: a rotation of the account's API token (and a newer
// bootstrap token) ends the sessions opened with the tokens it revokes, not those of
// the token that stays nor those opened without one; deleting the account ends the
// rest.
func testSessionsEndWithTheirToken(t *testing.T, s nodestore.Store) {
	old, boot, kept := nodestore.HashToken("old"), nodestore.HashToken("boot"), nodestore.HashToken("kept")
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: old, Origin: nodestore.TokenFromAPI})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: boot, Origin: nodestore.TokenFromBootstrap})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("b"), TokenHash: nodestore.HashToken("b"), Origin: nodestore.TokenFromAPI})
	withOld, withBoot, without := session("old", "a", old, t0), session("boot", "a", boot, t0), session("none", "a", "", t0)
	bs := session("b", "b", nodestore.HashToken("b"), t0)
	for _, ss := range []nodestore.Session{withOld, withBoot, without, bs} {
		mustCreateSession(t, s, ss, 10)
	}
	// A newer bootstrap token revokes the older one only.
	newBoot := nodestore.HashToken("boot2")
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: newBoot, Origin: nodestore.TokenFromBootstrap})
	if _, err := s.GetSession(ctx, withBoot.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("the session of a replaced bootstrap token: %v, want ErrNotFound", err)
	}
	if _, err := s.GetSession(ctx, withOld.IDHash); err != nil {
		t.Errorf("the session of a token still valid ended: %v", err)
	}
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: kept, Origin: nodestore.TokenFromAPI, ReplaceTokens: true})
	if _, err := s.GetSession(ctx, withOld.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("the session of a rotated token: %v, want ErrNotFound", err)
	}
	for name, ss := range map[string]nodestore.Session{"without a token": without, "of account b": bs} {
		if _, err := s.GetSession(ctx, ss.IDHash); err != nil {
			t.Errorf("the session %s ended: %v", name, err)
		}
	}
	if err := s.DeleteAccount(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, without.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("a deleted account's session: %v, want ErrNotFound", err)
	}
	if _, err := s.GetSession(ctx, bs.IDHash); err != nil {
		t.Errorf("another account's session ended: %v", err)
	}
}

// testPurgeSessions: expired and idle sessions go, live ones stay.
func testPurgeSessions(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a")
	live, idle, expired := session("live", "a", "", t0.Add(time.Hour)), session("idle", "a", "", t0), session("expired", "a", "", t0.Add(time.Hour))
	expired.ExpiresAt = t0.Add(2 * time.Hour)
	for _, ss := range []nodestore.Session{live, idle, expired} {
		mustCreateSession(t, s, ss, 10)
	}
	n, err := s.PurgeSessions(ctx, nodestore.PurgeSessionsParams{Now: t0.Add(2 * time.Hour), IdleBefore: t0.Add(30 * time.Minute)})
	if err != nil || n != 2 {
		t.Fatalf("PurgeSessions: %d, %v; want 2", n, err)
	}
	if _, err := s.GetSession(ctx, live.IDHash); err != nil {
		t.Errorf("a live session was purged: %v", err)
	}
}
