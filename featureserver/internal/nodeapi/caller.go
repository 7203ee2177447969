package nodeapi

import (
	"context"
	"errors"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// Caller is a caller the node authenticated itself, such as a console session: an
// in-process request with a Caller in its context and no Authorization header acts
// for Account. The context of a request from the network never carries one: only
// code of the node can set it (WithCaller).
type Caller struct {
	// Account is the account the caller acts for.
	Account string
	// TokenHash, when set, is the HashToken of the API token the caller proved: the
	// caller is refused (401) once that token no longer belongs to Account (rotated,
	// revoked), as the token itself would be.
	TokenHash string
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the Caller in ctx, if any.
func CallerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok && c.Account != ""
}

// ErrCallerRevoked is the error of ResolveCaller for a caller whose account or
// token is gone.
var ErrCallerRevoked = errors.New("nodeapi: the caller's account or API token is gone")

// ResolveCaller returns the account c acts for, or ErrCallerRevoked when the account
// is gone or the token c proved no longer belongs to it; any other error is the
// store's.
func ResolveCaller(ctx context.Context, store nodestore.Store, c Caller) (nodestore.Account, error) {
	var (
		acct nodestore.Account
		err  error
	)
	if c.TokenHash != "" {
		acct, err = store.AccountByToken(ctx, c.TokenHash)
	} else {
		acct, err = store.GetAccount(ctx, c.Account)
	}
	switch {
	case errors.Is(err, nodestore.ErrNotFound) || err == nil && acct.Sid != c.Account:
		return nodestore.Account{}, ErrCallerRevoked
	case err != nil:
		return nodestore.Account{}, err
	}
	return acct, nil
}
