package nodestore

import "errors"

// ErrNotFound is returned (wrapped or not) when a record does not exist or belongs to
// another account: the two are indistinguishable to a caller, so accounts cannot
// probe each other.
var ErrNotFound = errors.New("not found")
