package outbox

import (
	"errors"
	"fmt"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Sentinel errors: every error of this package wraps one of them, or the context's
// error when the context ended first. Test them with errors.Is.
var (
	// ErrNotFound: no event, endpoint or delivery with that id in that account.
	ErrNotFound = outboxdriver.ErrNotFound
	// ErrInvalid: the input was rejected; nothing changed. A *ValidationError says why.
	ErrInvalid = outboxdriver.ErrInvalid
	// ErrConflict: the id exists in the account with other content.
	ErrConflict = outboxdriver.ErrConflict
	// ErrEndpointNotActive: the endpoint is paused or disabled, so the operation (a
	// manual retry or recover) would send nothing; resume it first.
	ErrEndpointNotActive = errors.New("outbox: endpoint not active")
	// ErrEndpointDisabled: a disabled endpoint cannot be resumed; add it again.
	ErrEndpointDisabled = errors.New("outbox: endpoint disabled")
	// ErrDeliveryNotFinished: a delivery that is still pending cannot be retried.
	ErrDeliveryNotFinished = errors.New("outbox: delivery still pending")
	// ErrClosed: the outbox was closed.
	ErrClosed = errors.New("outbox: closed")
	// ErrUnavailable: the store could not do it (its database busy or locked by
	// another writer past its busy timeout, an I/O error); nothing changed, and the
	// same call may work later.
	ErrUnavailable = errors.New("outbox: store unavailable")
)

// ValidationError names the field that was rejected and why. It wraps ErrInvalid.
type ValidationError = outboxdriver.ValidationError

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
