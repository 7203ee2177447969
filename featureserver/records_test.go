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
	"github.com/switchboard-voice/switchboard/internal/pgtest"
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

// probes tells each write probe's outcome (nodeHooks.probed).
type probes chan error

func (p probes) probed(err error) {
	select {
	case p <- err:
	default: // a test waits for the next one
	}
}

// waitFailing waits for a probe that finds the database not writable and returns
// its error.
func (p probes) waitFailing(t *testing.T) error {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-p:
			if err != nil {
				return err
			}
		case <-deadline:
			t.Fatal("no probe found the database not writable")
		}
	}
}

// waitPassing waits for a probe that finds the database writable.
func (p probes) waitPassing(t *testing.T) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-p:
			if err == nil {
				return
			}
		case <-deadline:
			t.Fatal("no probe found the database writable again")
		}
	}
}

// startProbedNode starts a node whose write probe runs every few milliseconds and
// tells the test each outcome, logging to logs.
func startProbedNode(t *testing.T, cfg Config, logs *testkit.SyncBuffer) (*testNode, probes) {
	t.Helper()
	p := make(probes, 1)
	n := runNodeWith(t, cfg, zerolog.New(logs), nodeHooks{probeInterval: 10 * time.Millisecond, probed: p.probed})
	return n, p
}

// readyz is /readyz's status code and whole body.
func readyz(n *testNode) (int, string) {
	code, _, raw := n.do("GET", "/readyz", "", nil, nil)
	return code, strings.TrimSpace(string(raw))
}

const notWritableBody = `{"status":"database not writable"}`

// /readyz answers 503 "database not writable" once the periodic write probe finds
// the database deleted or read-only, or a write failed on a full one, with nothing
// of the path or the driver's error, which the log has.
func TestReadyzReportsAnUnwritableDatabase(t *testing.T) {
	t.Parallel()
	t.Run("deleted", func(t *testing.T) {
		t.Parallel()
		var logs testkit.SyncBuffer
		n, p := startProbedNode(t, testConfig(t), &logs)
		p.waitPassing(t)
		if code, body := readyz(n); code != http.StatusOK {
			t.Fatalf("readyz %d %s before the file was deleted", code, body)
		}
		path := dbPath(n)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := p.waitFailing(t); !strings.Contains(err.Error(), "was deleted") {
			t.Errorf("probe: %v, want the file deleted", err)
		}
		if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
			t.Errorf("readyz %d %s, want 503 %s", code, body, notWritableBody)
		}
		if !strings.Contains(logs.String(), "was deleted") {
			t.Errorf("the log does not say why:\n%s", logs.String())
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the node made a new database file: %v", err)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		var logs testkit.SyncBuffer
		n, p := startProbedNode(t, testConfig(t), &logs)
		// SQLite's own read-only mode on the one writer connection: every write
		// fails as on a read-only file (which root, running CI, could still write).
		setPragma(t, n, "query_only = 1")
		p.waitFailing(t)
		if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
			t.Errorf("readyz %d %s, want 503 %s", code, body, notWritableBody)
		}
		if !strings.Contains(logs.String(), "readonly") {
			t.Errorf("the log does not say the database is read-only:\n%s", logs.String())
		}
	})
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		var logs testkit.SyncBuffer
		n, _ := startProbedNode(t, testConfig(t), &logs)
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
		// The failed write itself turns /readyz: no probe needed.
		if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
			t.Errorf("readyz %d %s after a write failed, want 503 %s\n%s", code, body, notWritableBody, logs.String())
		}
		if !strings.Contains(logs.String(), "full") {
			t.Errorf("the log does not say the database is full:\n%s", logs.String())
		}
	})
}

// dbPath is the SQLite file of a test node.
func dbPath(n *testNode) string {
	loc, err := parseDatabaseURL(n.cfg.DatabaseURL)
	if err != nil {
		n.t.Fatal(err)
	}
	return loc.Path
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
	path := dbPath(n)
	for _, name := range []string{path, path + "-wal", path + ".lock"} {
		fi, err := os.Stat(name)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v (%v), want mode 0600", name, fi.Mode().Perm(), err)
		}
	}
}

// While the database cannot be written, new calls are refused with 503 (a deleted
// SQLite file still takes the node's writes, which would vanish), by REST and with a
// scenario alike, and the condition is logged at error once, saying why.
func TestCallsAreRefusedWhileTheDatabaseCannotBeWritten(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	n := runNodeWith(t, testConfig(t), zerolog.New(&logs), nodeHooks{})
	acct := n.createAccount("acme")
	bodies := map[string]map[string]any{
		"rest": testkit.WithSpeech(map[string]any{"call_hook": map[string]any{"url": "http://127.0.0.1:1/call"}, "from": "a", "to": "b"}),
		"scenario": testkit.WithSpeech(map[string]any{"call_hook": map[string]any{"url": "http://127.0.0.1:1/call"}, "from": "a", "to": "b",
			"scenario": map[string]any{"expect": map[string]any{"verbs": []string{"say"}}}}),
	}
	if err := os.Remove(dbPath(n)); err != nil {
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
			if code != http.StatusServiceUnavailable || problem.Status != http.StatusServiceUnavailable || !strings.Contains(problem.Detail, "cannot be written") ||
				strings.Contains(string(raw), dbPath(n)) {
				t.Errorf("%s call on a deleted database: %d %s, want 503 saying the database cannot be written, without its path", name, code, raw)
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

// On PostgreSQL the periodic write probe turns /readyz 503 while the node's tables
// refuse writes, and back to 200 once they take them.
func TestReadyzProbesPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	var logs testkit.SyncBuffer
	n, p := startProbedNode(t, pgConfig(t, dbURL, "node-a"), &logs)
	p.waitPassing(t)
	exec := func(q string) {
		t.Helper()
		if _, err := n.node.db.pool.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER TABLE node_migrations RENAME TO node_migrations_away`)
	p.waitFailing(t)
	if code, body := readyz(n); code != http.StatusServiceUnavailable || body != notWritableBody {
		t.Errorf("readyz %d %s, want 503 %s", code, body, notWritableBody)
	}
	exec(`ALTER TABLE node_migrations_away RENAME TO node_migrations`)
	p.waitPassing(t)
	if code, body := readyz(n); code != http.StatusOK {
		t.Errorf("readyz %d %s once writable again, want 200", code, body)
	}
}
