package callctl_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchAppEnv) != "" {
		// The benchmark's application runs in a child process (this test binary
		// started again), so that the node's memory is measured alone.
		serveBenchApp()
		return
	}
	goleak.VerifyTestMain(m)
}
