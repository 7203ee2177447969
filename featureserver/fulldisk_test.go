//go:build linux

package featureserver

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and returns it,
// unmounted when the test ends (after what the test started later has stopped). It
// skips the test, saying why, where mounting is impossible (not root), and fails it
// under CI, which runs as root.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs (CI runs as root): %v", err)
		}
		t.Skipf("SKIP: cannot mount a tmpfs for a full file system (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the tmpfs: %v", err)
		}
	})
	return dir
}

// fill writes a file until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the file system: %v", err)
			}
			return
		}
	}
}

// With the database on a file system that fills up (a small tmpfs), /readyz turns
// 503 "database not writable" at the next probe, the condition is logged once at
// error, /readyz is back to 200 once space returns (logged once at info), and
// every event the node accepted meanwhile is kept, across a restart too.
func TestFullDiskIsReportedAndNothingAcceptedIsLost(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, 16<<20)
	cfg := testConfig(t)
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "node.db")
	var logs testkit.SyncBuffer
	n, p := startProbedNode(t, cfg, &logs)
	acct := n.createAccount("acme")
	receiver := listenHandler(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	if code, _, raw := n.do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": receiver + "/in",
		"policy": map[string]any{"allowHttp": true}}, nil); code != http.StatusCreated {
		t.Fatalf("endpoint: %d %s", code, raw)
	}
	var accepted []string
	publish := func(i int) int {
		id := fmt.Sprintf("ev-%d", i)
		code, _, _ := n.do("POST", "/api/v1/events", acct.APIToken, map[string]any{"id": id, "type": "invoice.paid",
			"data": map[string]any{"pad": strings.Repeat("x", 2000)}}, nil)
		if code == http.StatusCreated {
			accepted = append(accepted, id)
		}
		return code
	}
	for i := range 20 {
		if code := publish(i); code != http.StatusCreated {
			t.Fatalf("publish %d before the disk filled: %d", i, code)
		}
	}
	p.waitPassing(t)
	if code, body := readyz(n); code != http.StatusOK {
		t.Fatalf("readyz %d %s before the disk filled", code, body)
	}

	fill(t, filepath.Join(dir, "fill"))
	if err := p.waitFailing(t); !strings.Contains(err.Error(), "full") {
		t.Errorf("probe on a full file system: %v", err)
	}
	if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
		t.Errorf("readyz %d %s on a full disk, want 503 %s", code, body, notWritableBody)
	}
	refused := 0
	for i := 20; i < 220; i++ {
		if publish(i) != http.StatusCreated {
			refused++
		}
	}
	if code, body := readyz(n); code != http.StatusServiceUnavailable {
		t.Errorf("readyz %d %s after publishing on a full disk, want 503", code, body)
	}

	if err := os.Remove(filepath.Join(dir, "fill")); err != nil {
		t.Fatal(err)
	}
	// A write that succeeds ends the window of the failed ones; the next probe the
	// rest.
	if code := publish(1000); code != http.StatusCreated {
		t.Fatalf("publish once space returned: %d", code)
	}
	p.waitPassing(t)
	if code, body := readyz(n); code != http.StatusOK {
		t.Errorf("readyz %d %s once space returned, want 200", code, body)
	}
	count := func(level, msg string) int {
		c := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `"level":"`+level+`"`) && strings.Contains(l, msg) {
				c++
			}
		}
		return c
	}
	if e, i := count("error", "cannot be written"), count("info", "can be written again"); e != 1 || i != 1 {
		t.Errorf("%d error and %d info lines about the database, want 1 each:\n%s", e, i, logs.String())
	}
	t.Logf("%d publishes accepted, %d refused while the disk was full", len(accepted), refused)

	check := func(n *testNode, when string) {
		t.Helper()
		for _, id := range accepted {
			if code, _, raw := n.do("GET", "/api/v1/events/"+id, acct.APIToken, nil, nil); code != http.StatusOK {
				t.Fatalf("accepted event %s %s: %d %s", id, when, code, raw)
			}
		}
	}
	check(n, "after the disk filled")
	n.stop()
	check(startNodeOn(t, n), "after a restart")
}
