package pgpool_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A pool's background goroutines end with Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
