package nodestoretest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testPortalSessions: a portal session reads back with its scope, and the bound
// counts each kind apart: portal sign-ins never end the account's own sessions, nor
// the other way round.
func testPortalSessions(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a")
	own := session("own", "a", nodestore.HashToken("tok"), t0)
	mustCreateSession(t, s, own, 2)
	portal := session("p0", "a", "", t0.Add(time.Second))
	portal.Portal = &nodestore.PortalScope{LinkID: "pl_1", Endpoints: []string{"ep_1", "ep_2"}}
	mustCreateSession(t, s, portal, 2)
	got, err := s.GetSession(ctx, portal.IDHash)
	if err != nil || !reflect.DeepEqual(got, portal) {
		t.Fatalf("GetSession: %+v, %v; want %+v", got, err, portal)
	}
	for i, id := range []string{"p1", "p2", "p3"} {
		p := session(id, "a", "", t0.Add(time.Duration(i+2)*time.Second))
		p.Portal = &nodestore.PortalScope{LinkID: "pl_" + id}
		mustCreateSession(t, s, p, 2)
	}
	if _, err := s.GetSession(ctx, own.IDHash); err != nil {
		t.Fatalf("portal sign-ins ended the account's own session: %v", err)
	}
	for id, live := range map[string]bool{"p0": false, "p1": false, "p2": true, "p3": true} {
		if _, err := s.GetSession(ctx, nodestore.HashToken(id)); (err == nil) != live {
			t.Errorf("portal session %s: %v, want live %v", id, err, live)
		}
	}
	mustCreateSession(t, s, session("own2", "a", "", t0.Add(time.Minute)), 1)
	if _, err := s.GetSession(ctx, own.IDHash); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("the account's own bound did not end its oldest session: %v", err)
	}
	if _, err := s.GetSession(ctx, nodestore.HashToken("p3")); err != nil {
		t.Fatalf("an own sign-in ended a portal session: %v", err)
	}
}

// testPortalLinks: a link redeems once, before it expires; of many redeeming it at
// once, one gets it; a link of no account is refused; the purge takes expired links.
func testPortalLinks(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a")
	link := nodestore.PortalLink{IDHash: nodestore.HashToken("secret"), ID: "pl_1", AccountSid: "a", Endpoints: []string{"ep_1"},
		CreatedBy: "tok_1", CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	if err := s.CreatePortalLink(ctx, link); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemPortalLink(ctx, nodestore.RedeemPortalLinkParams{IDHash: link.IDHash, Now: t0.Add(10 * time.Minute)}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("redeemed at its expiry: %v, want ErrNotFound", err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		won   []nodestore.PortalLink
		other []error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.RedeemPortalLink(ctx, nodestore.RedeemPortalLinkParams{IDHash: link.IDHash, Now: t0.Add(time.Minute)})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won = append(won, l)
			} else if !errors.Is(err, nodestore.ErrNotFound) {
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	want := link
	used := t0.Add(time.Minute)
	want.UsedAt = &used
	if len(won) != 1 || len(other) != 0 || !reflect.DeepEqual(won[0], want) {
		t.Fatalf("redeemed by %d (%+v), errors %v; want once, as %+v", len(won), won, other, want)
	}
	none := link
	none.IDHash, none.AccountSid = nodestore.HashToken("other"), "nobody"
	if err := s.CreatePortalLink(ctx, none); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a link of no account: %v, want ErrNotFound", err)
	}
	all := link
	all.IDHash, all.ID, all.Endpoints = nodestore.HashToken("all"), "pl_2", nil
	if err := s.CreatePortalLink(ctx, all); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PurgeSessions(ctx, nodestore.PurgeSessionsParams{Now: t0.Add(time.Hour), IdleBefore: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RedeemPortalLink(ctx, nodestore.RedeemPortalLinkParams{IDHash: all.IDHash, Now: t0.Add(time.Minute)}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a purged link redeemed: %v", err)
	}
}

// testPortalSettings: none saved reads as empty; saved ones replace each other;
// deleting the account deletes them.
func testPortalSettings(t *testing.T, s nodestore.Store) {
	putAccounts(t, s, "a", "b")
	if got, err := s.GetPortalSettings(ctx, "a"); err != nil || got.FrameAncestors == nil || len(got.FrameAncestors) != 0 {
		t.Fatalf("none saved: %+v %v", got, err)
	}
	for _, origins := range [][]string{{"https://app.example.com", "https://b.example:8443"}, {"https://c.example"}} {
		if err := s.SavePortalSettings(ctx, nodestore.PortalSettings{AccountSid: "a", FrameAncestors: origins}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetPortalSettings(ctx, "a"); err != nil || !reflect.DeepEqual(got.FrameAncestors, origins) {
			t.Fatalf("saved %v, read %+v %v", origins, got, err)
		}
	}
	if got, _ := s.GetPortalSettings(ctx, "b"); len(got.FrameAncestors) != 0 {
		t.Fatalf("another account's settings leak: %+v", got)
	}
	if err := s.DeleteAccount(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetPortalSettings(ctx, "a"); len(got.FrameAncestors) != 0 {
		t.Fatalf("a deleted account's settings stay: %+v", got)
	}
}
