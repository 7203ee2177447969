package verbs

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPayload is wrapped by every decode and validation error, so callers can
// raise the invalid-app-payload alert with errors.Is.
var ErrInvalidPayload = errors.New("invalid-app-payload")

// ValidationError names the verb (index in the array, verb name) and the property at fault.
type ValidationError struct {
	Index  int    // position in the array, -1 for a single verb
	Verb   string // "" when the verb name itself is missing/unknown
	Field  string // property path, e.g. "actionHook" or "target[0].type"; "" when not about a field
	Reason string // e.g. "unknown verb", "unknown property", "want number, got string", "required"
}

// Error reads like `invalid-app-payload: verb[2] "gather": field "actionHook.url": required`.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalidPayload.Error())
	if e.Index >= 0 || e.Verb != "" || e.Field != "" {
		b.WriteString(":")
	}
	if e.Index >= 0 {
		fmt.Fprintf(&b, " verb[%d]", e.Index)
	}
	if e.Verb != "" {
		fmt.Fprintf(&b, " %q", e.Verb)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns ErrInvalidPayload.
func (e *ValidationError) Unwrap() error { return ErrInvalidPayload }
