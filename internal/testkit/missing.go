package testkit

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// SkipMissing is how a test that needs something outside Go (PostgreSQL, Node.js,
// Chromium) gives way when it is missing: under CI (CI=true) it fails, since CI must
// run every test; elsewhere it skips t, and the first skip for need in this test
// process is announced on one line where the developer sees it. go test shows
// nothing of a passing package but its "ok" line unless -v is given, so a whole
// suite skipped would otherwise pass unnoticed.
func SkipMissing(t testing.TB, need, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is needed under CI (CI=true): %s", need, why)
		return
	}
	announce.mu.Lock()
	first := !announce.done[need]
	announce.done[need] = true
	announce.mu.Unlock()
	if first {
		line := fmt.Sprintf("SKIP  %s: the tests that need %s: %s", packageDir(), need, why)
		announceTo(strings.Join(strings.Fields(line), " "))
	}
	t.Skipf("needs %s: %s", need, why)
}

// announceTo is Announce, or what a test of SkipMissing puts in its place.
var announceTo = Announce

var announce = struct {
	mu   sync.Mutex
	done map[string]bool
}{done: map[string]bool{}}

// Announce writes line where a person running go test sees it even when the package
// passes: the go command's own standard error (its output is the test binary's
// parent's; Linux), else the terminal, else the test's standard error (which go test
// shows with -v or on a failure).
func Announce(line string) {
	w := visible()
	fmt.Fprintln(w, line)
	if f, ok := w.(*os.File); ok && f != os.Stderr {
		_ = f.Close()
	}
}

func visible() io.Writer {
	for _, path := range []string{"/proc/" + strconv.Itoa(os.Getppid()) + "/fd/2", "/dev/tty"} {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			continue
		}
		// A terminal or a pipe; not a regular file, where a second open file
		// description would write over the go command's own lines.
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			return f
		}
		_ = f.Close()
	}
	return os.Stderr
}

// packageDir is the test's package as a directory of its module (go test runs a
// test binary in its package's directory), or that directory when no go.mod is
// found above it.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}
