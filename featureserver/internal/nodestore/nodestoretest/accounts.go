package nodestoretest

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testPutAccount: an account reads back as stored; putting it again updates its name
// and webhook secret and keeps its creation time; a missing one is ErrNotFound.
func testPutAccount(t *testing.T, s nodestore.Store) {
	a := account("acct")
	a.CreatedAt = t0.Add(1500 * time.Microsecond) // kept to the millisecond
	mustPut(t, s, nodestore.PutAccountParams{Account: a})
	got, err := s.GetAccount(ctx, "acct")
	want := a
	want.CreatedAt = t0.Add(time.Millisecond)
	if err != nil || got != want {
		t.Fatalf("GetAccount: %+v, %v; want %+v", got, err, want)
	}
	changed := nodestore.Account{Sid: "acct", Name: "renamed", WebhookSecret: "rotated", CreatedAt: t0.Add(time.Hour)}
	mustPut(t, s, nodestore.PutAccountParams{Account: changed})
	got, err = s.GetAccount(ctx, "acct")
	want.Name, want.WebhookSecret = "renamed", "rotated"
	if err != nil || got != want {
		t.Fatalf("after an update: %+v, %v; want %+v (the creation time stays)", got, err, want)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Fatalf("created at %v, want UTC", got.CreatedAt)
	}
	if _, err := s.GetAccount(ctx, "nobody"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a missing account: %v, want ErrNotFound", err)
	}
}

// testAccountByToken: a token's hash finds its account; an unknown one is ErrNotFound;
// an account may have several API tokens; a hash put for another account moves to it;
// putting an account without a token keeps its tokens.
func testAccountByToken(t *testing.T, s nodestore.Store) {
	h1, h2 := nodestore.HashToken("token-one"), nodestore.HashToken("token-two")
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: h1, Origin: nodestore.TokenFromAPI})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: h2, Origin: nodestore.TokenFromAPI})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("b")})
	for _, h := range []string{h1, h2} {
		if got, err := s.AccountByToken(ctx, h); err != nil || got != account("a") {
			t.Fatalf("AccountByToken: %+v, %v; want account a", got, err)
		}
	}
	if _, err := s.AccountByToken(ctx, nodestore.HashToken("token-unknown")); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("an unknown token: %v, want ErrNotFound", err)
	}
	mustPut(t, s, nodestore.PutAccountParams{Account: account("b"), TokenHash: h2, Origin: nodestore.TokenFromAPI})
	if got, err := s.AccountByToken(ctx, h2); err != nil || got.Sid != "b" {
		t.Fatalf("a token put for b: %+v, %v; want account b", got, err)
	}
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a")})
	if got, err := s.AccountByToken(ctx, h1); err != nil || got.Sid != "a" {
		t.Fatalf("after putting a without a token: %+v, %v; want a's token kept", got, err)
	}
}

// testBootstrapTokens: a bootstrap token replaces the account's earlier bootstrap
// token, and leaves its API tokens and other accounts' bootstrap tokens alone.
func testBootstrapTokens(t *testing.T, s nodestore.Store) {
	api, old, rotated := nodestore.HashToken("api"), nodestore.HashToken("boot-old"), nodestore.HashToken("boot-new")
	other := nodestore.HashToken("boot-other")
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: api, Origin: nodestore.TokenFromAPI})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: old, Origin: nodestore.TokenFromBootstrap})
	mustPut(t, s, nodestore.PutAccountParams{Account: account("b"), TokenHash: other, Origin: nodestore.TokenFromBootstrap})
	// The same file applied twice changes nothing.
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: old, Origin: nodestore.TokenFromBootstrap})
	if got, err := s.AccountByToken(ctx, old); err != nil || got.Sid != "a" {
		t.Fatalf("the bootstrap token applied again: %+v, %v", got, err)
	}
	mustPut(t, s, nodestore.PutAccountParams{Account: account("a"), TokenHash: rotated, Origin: nodestore.TokenFromBootstrap})
	if _, err := s.AccountByToken(ctx, old); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("the rotated-out bootstrap token: %v, want ErrNotFound", err)
	}
	for hash, sid := range map[string]string{rotated: "a", api: "a", other: "b"} {
		if got, err := s.AccountByToken(ctx, hash); err != nil || got.Sid != sid {
			t.Fatalf("token of %s after the rotation: %+v, %v", sid, got, err)
		}
	}
}
