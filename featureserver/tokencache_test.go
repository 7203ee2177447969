package featureserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// failingTokens is a store whose AccountByToken answers err when set.
type failingTokens struct {
	nodestore.Store
	accounts map[string]nodestore.Account
	err      error
}

func (f *failingTokens) AccountByToken(_ context.Context, hash string) (nodestore.Account, error) {
	if f.err != nil {
		return nodestore.Account{}, f.err
	}
	a, ok := f.accounts[hash]
	if !ok {
		return nodestore.Account{}, nodestore.ErrNotFound
	}
	return a, nil
}

// A token seen is answered from memory while the store fails, and only then; a token
// the store no longer knows is forgotten; an unknown one gets the store's error.
func TestStaleTokensWhileTheDatabaseFails(t *testing.T) {
	t.Parallel()
	acct := nodestore.Account{Sid: "a", CreatedAt: time.Now()}
	inner := &failingTokens{accounts: map[string]nodestore.Account{"h1": acct}}
	s := withStaleTokens(inner)
	ctx := context.Background()
	if got, err := s.AccountByToken(ctx, "h1"); err != nil || got.Sid != "a" {
		t.Fatalf("with the store up: %+v, %v", got, err)
	}
	down := errors.New("connection refused")
	inner.err = down
	if got, err := s.AccountByToken(ctx, "h1"); err != nil || got.Sid != "a" {
		t.Fatalf("a token seen, with the store down: %+v, %v", got, err)
	}
	if _, err := s.AccountByToken(ctx, "h2"); !errors.Is(err, down) {
		t.Fatalf("a token never seen, with the store down: %v, want the store's error", err)
	}
	inner.err = nil
	delete(inner.accounts, "h1") // revoked
	if _, err := s.AccountByToken(ctx, "h1"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a revoked token with the store up: %v, want ErrNotFound", err)
	}
	inner.err = down
	if _, err := s.AccountByToken(ctx, "h1"); !errors.Is(err, down) {
		t.Fatalf("a revoked token, with the store down again: %v, want the store's error", err)
	}
}
