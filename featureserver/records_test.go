package featureserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// A second node on the same SQLite file is refused before it touches the file: the
// live node's active call stays active (a second node used to end it), and the error
// says why.
func TestSecondNodeOnTheDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	live := nodestore.Call{CallSid: "live", AccountSid: "a", CallStatus: "in-progress", Active: true, CreatedAt: time.Now().UTC()}
	if err := n.node.store.SaveCall(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	cfg := n.cfg
	cfg.Listen = "127.0.0.1:0"
	second, err := NewNode(context.Background(), cfg, NodeOptions{})
	if err == nil {
		second.closeStores()
		t.Fatal("a second node opened the database of a running one")
	}
	if !errors.Is(err, ErrDatabaseInUse) || !strings.Contains(err.Error(), "process ") || !strings.Contains(err.Error(), ".lock") {
		t.Errorf("error %q: want ErrDatabaseInUse naming the process and the lock file", err)
	}
	c, err := n.node.store.GetCall(context.Background(), nodestore.GetCallParams{AccountSid: "a", CallSid: "live"})
	if err != nil || !c.Active || c.Reason != "" {
		t.Errorf("the live node's call after the refused start: %+v, %v", c, err)
	}
	// Once the first node stopped, the file is free.
	n.stop()
	again := startNodeOn(t, n)
	again.stop()
}

// readyz answers 503 with the reason while the database cannot be written.
func TestReadyzReportsAnUnwritableDatabase(t *testing.T) {
	t.Parallel()
	readyz := func(n *testNode) (int, string) {
		code, _, raw := n.do("GET", "/readyz", "", nil, nil)
		var body struct{ Status, Reason string }
		_ = json.Unmarshal(raw, &body)
		return code, body.Reason
	}
	t.Run("deleted", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, nil)
		if code, _ := readyz(n); code != http.StatusOK {
			t.Fatalf("readyz %d before the file was deleted", code)
		}
		if err := os.Remove(n.node.db.health.path); err != nil {
			t.Fatal(err)
		}
		if code, reason := readyz(n); code != http.StatusServiceUnavailable || !strings.Contains(reason, "deleted") {
			t.Errorf("readyz %d %q, want 503 saying the file was deleted", code, reason)
		}
		if _, err := os.Stat(n.node.db.health.path); !os.IsNotExist(err) {
			t.Errorf("the node made a new database file: %v", err)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, nil)
		// SQLite's own read-only mode on the one writer connection: every write
		// fails as on a read-only file (which root, running CI, could still write).
		setPragma(t, n, "query_only = 1")
		if code, reason := readyz(n); code != http.StatusServiceUnavailable || !strings.Contains(reason, "readonly") {
			t.Errorf("readyz %d %q, want 503 saying the database is read-only", code, reason)
		}
	})
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		n := startNode(t, nil)
		acct := n.createAccount("acme")
		// The file may not grow: the writes that need a new page fail as on a
		// full disk.
		setPragma(t, n, "max_page_count = 1")
		big := strings.Repeat("x", 1500)
		failed := false
		for i := 0; i < 500 && !failed; i++ {
			code, _, _ := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Applications", acct.APIToken,
				map[string]any{"name": "app", "call_hook": map[string]any{"url": "http://127.0.0.1:1/" + big}}, nil)
			failed = code == http.StatusInternalServerError
		}
		if !failed {
			t.Fatal("no write failed on a full database")
		}
		if code, reason := readyz(n); code != http.StatusServiceUnavailable || !strings.Contains(reason, "full") {
			t.Errorf("readyz %d %q after a write failed, want 503 saying the database is full", code, reason)
		}
	})
}

// setPragma sets a pragma on the node's one writer connection.
func setPragma(t *testing.T, n *testNode, pragma string) {
	t.Helper()
	if err := n.node.db.sqlite.WriteTx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec("PRAGMA " + pragma)
		return err
	}); err != nil {
		t.Fatalf("PRAGMA %s: %v", pragma, err)
	}
}

// failingFinalSaves fails the first saves of ended calls, as a database that is
// briefly unwritable does.
type failingFinalSaves struct {
	nodestore.Store
	left *atomic.Int32
}

func (s failingFinalSaves) SaveCall(ctx context.Context, c nodestore.Call) error {
	if !c.Active && s.left.Add(-1) >= 0 {
		return errors.New("database is locked")
	}
	return s.Store.SaveCall(ctx, c)
}

// A final record the store refuses is retried until it is saved: the call never
// stays active on record, and the next start relabels nothing.
func TestFinalRecordIsRetriedUntilSaved(t *testing.T) {
	t.Parallel()
	app := hangupApp(t)
	var left atomic.Int32
	left.Store(3)
	n := runNodeWith(t, testConfig(t), testLogger(), nodeHooks{wrapStore: func(s nodestore.Store) nodestore.Store {
		return failingFinalSaves{s, &left}
	}})
	acct := n.createAccount("acme")
	sid := n.startCall(acct, app.URL, nil)
	n.waitCall(acct, sid)
	if left.Load() >= 0 {
		t.Fatalf("the store refused %d final saves, want 3", 3-left.Load())
	}
	n.stop()
	again := startNodeOn(t, n)
	var v nodestore.Call
	if code, _, raw := again.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+sid, acct.APIToken, nil, &v); code != http.StatusOK ||
		v.Active || v.Reason != "hangup-verb" {
		t.Errorf("the call after a restart: %d %s", code, raw)
	}
}

// The node's database, its WAL and its lock file are readable by their owner only:
// the database holds webhook secrets and hook credentials.
func TestNodeFilesAreOwnerOnly(t *testing.T) {
	t.Parallel()
	n := startNode(t, nil)
	n.createAccount("acme") // a write: the WAL exists
	path := n.node.db.health.path
	for _, name := range []string{path, path + "-wal", path + ".lock"} {
		fi, err := os.Stat(name)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v (%v), want mode 0600", name, fi.Mode().Perm(), err)
		}
	}
}

// While the database cannot be written, new calls are refused with 503 naming why
// (a deleted SQLite file still takes the node's writes, which would vanish), by
// REST and with a scenario alike, and the condition is logged at error once.
func TestCallsAreRefusedWhileTheDatabaseCannotBeWritten(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	n := runNodeWith(t, testConfig(t), zerolog.New(&logs), nodeHooks{})
	acct := n.createAccount("acme")
	bodies := map[string]map[string]any{
		"rest": {"call_hook": map[string]any{"url": "http://127.0.0.1:1/call"}, "from": "a", "to": "b"},
		"scenario": {"call_hook": map[string]any{"url": "http://127.0.0.1:1/call"}, "from": "a", "to": "b",
			"scenario": map[string]any{"expect": map[string]any{"verbs": []string{"say"}}}},
	}
	if err := os.Remove(n.node.db.health.path); err != nil {
		t.Fatal(err)
	}
	for name, body := range bodies {
		for i := 0; i < 2; i++ {
			var problem struct {
				Status int
				Detail string
			}
			code, _, raw := n.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, body, nil)
			_ = json.Unmarshal(raw, &problem)
			if code != http.StatusServiceUnavailable || problem.Status != http.StatusServiceUnavailable || !strings.Contains(problem.Detail, "was deleted") {
				t.Errorf("%s call on a deleted database: %d %s, want 503 saying the file was deleted", name, code, raw)
			}
		}
	}
	var list []json.RawMessage
	if code, _, raw := n.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, nil, &list); code != http.StatusOK || len(list) != 0 {
		t.Errorf("calls after the refusals: %d %s, want none", code, raw)
	}
	var errorLines int
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"level":"error"`) && strings.Contains(line, "cannot be written") && strings.Contains(line, "was deleted") {
			errorLines++
		}
	}
	if errorLines != 1 {
		t.Errorf("%d error lines about the deleted database, want 1:\n%s", errorLines, logs.String())
	}
}
