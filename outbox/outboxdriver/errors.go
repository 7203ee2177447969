package outboxdriver

import (
	"errors"
	"fmt"
)

// Sentinel errors. A store wraps ErrNotFound and ErrConflict as its methods' doc
// comments say, and ErrInvalid for input it refuses (a caller's transaction of a type
// it cannot use, bad options); the engine treats any other error as the store being
// unavailable. The texts are those of package outbox, which re-exports these values.
var (
	// ErrNotFound: no event, endpoint or delivery with that id in that account.
	ErrNotFound = errors.New("outbox: not found")
	// ErrInvalid: the input was rejected; nothing changed. A *ValidationError says why
	// when one field is to blame.
	ErrInvalid = errors.New("outbox: invalid input")
	// ErrConflict: the id exists in the account with other content.
	ErrConflict = errors.New("outbox: conflict")
)

// ValidationError names the field that was rejected and why. It wraps ErrInvalid.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("outbox: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }
