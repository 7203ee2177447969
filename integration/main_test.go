package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// switchboardBin is the switchboard binary built once for the package's tests.
var switchboardBin string

// TestMain builds ./cmd/switchboard once (every test drives the real binary, as a
// developer would), runs the tests, removes the build and checks for leaked
// goroutines.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-integration-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: temp dir:", err)
		os.Exit(2)
	}
	switchboardBin = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", switchboardBin, "./cmd/switchboard")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "integration: go build ./cmd/switchboard: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "integration: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
