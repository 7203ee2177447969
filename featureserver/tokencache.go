package featureserver

import (
	"context"
	"errors"
	"sync"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// tokenCacheSize bounds the tokens remembered; past it the memory starts afresh.
const tokenCacheSize = 10_000

// staleTokens is the node's store with API tokens answered from memory while the
// database fails (stale-if-error): a node cut off from its database still
// authenticates the callers it has seen, so that its live calls stay readable and
// controllable (their state is in memory). While the database answers it decides,
// so a token revoked on any node is refused at once.
type staleTokens struct {
	nodestore.Store
	mu    sync.Mutex
	known map[string]nodestore.Account
}

func withStaleTokens(s nodestore.Store) *staleTokens {
	return &staleTokens{Store: s, known: map[string]nodestore.Account{}}
}

// AccountByToken asks the store, remembers what it found and forgets what it did not;
// when the store fails, it answers what it remembers, or the store's error.
func (s *staleTokens) AccountByToken(ctx context.Context, tokenHash string) (nodestore.Account, error) {
	acct, err := s.Store.AccountByToken(ctx, tokenHash)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		if len(s.known) >= tokenCacheSize {
			clear(s.known)
		}
		s.known[tokenHash] = acct
	case errors.Is(err, nodestore.ErrNotFound):
		delete(s.known, tokenHash)
	case ctx.Err() == nil:
		if known, ok := s.known[tokenHash]; ok {
			return known, nil
		}
	}
	return acct, err
}
