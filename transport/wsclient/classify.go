package wsclient

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/switchboard-voice/switchboard/retry"
)

// classifyAttempt gives the class of one opening handshake. ctx is the caller's
// context (not the per-attempt one): when it has ended the caller gave up.
//
// Order matters: the caller giving up, then what the peer answered (a status, or a
// 101 we cannot accept), then refusals and permanent faults, then timeouts (all of
// them are handshake timeouts: the attempt is one bounded handshake, TCP connect and
// TLS included), and last the network error as Options.Classify sees it.
func classifyAttempt(ctx context.Context, o Options, status int, err error) retry.Class {
	switch {
	case err == nil:
		return retry.Success
	case ctx.Err() != nil:
		return retry.Canceled
	case status != 0 && status != http.StatusSwitchingProtocols:
		return retry.ClassifyStatus(status)
	case status == http.StatusSwitchingProtocols, errors.Is(err, ErrSubprotocol):
		// Upgraded, but not to a connection we can use (bad accept key, extension or
		// subprotocol).
		return retry.Unparseable
	}
	c := o.Classify(err)
	switch c {
	case retry.EgressRefused, retry.Permanent, retry.Canceled:
		return c
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return retry.HandshakeTimeout
	}
	return c
}
