package calls

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/sqlitenode"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noNetwork serves managers that start no call.
type noNetwork struct{}

func (noNetwork) CallOptions(appURL string) callctl.Options { return callctl.Options{AppURL: appURL} }
func (noNetwork) CloseIdleConnections()                     {}

// newStore opens a fresh SQLite node store, closed when t ends.
func newStore(t *testing.T) *sqlitenode.Store {
	t.Helper()
	store, err := sqlitenode.Open(t.Context(), filepath.Join(t.TempDir(), "node.db"), sqlitenode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// newManager makes a manager of o on a fresh SQLite store (o.Store when set), for
// tests that start no call: one call at most, the network none.
func newManager(t *testing.T, o Options) *Manager {
	t.Helper()
	if o.Store == nil {
		o.Store = newStore(t)
	}
	o.Network, o.MaxCalls, o.IdleLimit = noNetwork{}, 1, time.Second
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// An invalid rc or unknown rp class is logged once per URL, however many calls use it.
func TestFragmentWarningsLoggedOncePerURL(t *testing.T) {
	t.Parallel()
	var logs testkit.SyncBuffer
	m := newManager(t, Options{Logger: zerolog.New(&logs)})
	warn := func(raw string) {
		t.Helper()
		hook, err := ParseHook(nodestore.HookSpec{URL: raw})
		if err != nil {
			t.Fatal(err)
		}
		m.warnFragment(hook.URL)
	}
	for range 3 {
		warn("http://127.0.0.1:1/call#rc=abc&rp=bogus")
	}
	warn("http://127.0.0.1:1/other")
	if n := strings.Count(logs.String(), `"level":"warn"`); n != 3 {
		t.Errorf("%d warnings logged, want 3 (rc, the unknown class, the rp fallback: once):\n%s", n, logs.String())
	}
}

// New names every bad option at once.
func TestNewReportsEveryBadOption(t *testing.T) {
	t.Parallel()
	_, err := New(Options{MaxCalls: -1})
	for _, field := range []string{"Store", "Network", "MaxCalls", "IdleLimit"} {
		if err == nil || !strings.Contains(err.Error(), "Options."+field) {
			t.Errorf("error %v does not name Options.%s", err, field)
		}
	}
}

// A call a crashed run left active ends as completed when it had been answered,
// else as failed, with the restart as its reason, at the time of the recovery.
func TestRecoverInterrupted(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{Clock: testkit.NewClock()})
	created := testkit.Epoch.Add(-time.Minute)
	for sid, status := range map[string]string{"answered": "in-progress", "ringing": "trying"} {
		if err := m.store.SaveCall(t.Context(), nodestore.Call{CallSid: sid, AccountSid: "a", CallStatus: status, Active: true, CreatedAt: created}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := m.RecoverInterrupted(t.Context()); err != nil || n != 2 {
		t.Fatalf("recovered %d, %v; want 2", n, err)
	}
	for sid, want := range map[string]struct {
		status string
		sip    int
	}{"answered": {"completed", 200}, "ringing": {"failed", 487}} {
		c, err := m.Get(t.Context(), "a", sid)
		if err != nil || c.Active || c.CallStatus != want.status || c.SipStatus != want.sip || c.Reason != ReasonNodeRestart ||
			c.EndedAt == nil || !c.EndedAt.Equal(testkit.Epoch) {
			t.Errorf("%s after recovery: %+v, %v; want %s/%d ended at %v", sid, c, err, want.status, want.sip, testkit.Epoch)
		}
	}
	if n, err := m.RecoverInterrupted(t.Context()); err != nil || n != 0 {
		t.Fatalf("a second recovery: %d, %v; want none", n, err)
	}
}

// Live control of a call that is not active here is ErrNotFound, and nothing is
// sent anywhere.
func TestControlOfAnUnknownCall(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{})
	for name, err := range map[string]error{
		"hangup":    m.Hangup("a", "nope"),
		"redirect":  m.Redirect("a", "nope", nodestore.HookSpec{URL: "http://127.0.0.1:1/"}, nil),
		"no-answer": m.NoAnswer("a", "nope"),
		"mute":      m.Mute("a", "nope", true),
	} {
		if !errors.Is(err, nodestore.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := m.Get(t.Context(), "a", "nope"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Errorf("get: %v, want ErrNotFound", err)
	}
}

// duringList runs start just before List's read of the store and end just after it.
type duringList struct {
	nodestore.Store
	start, end func()
}

func (s *duringList) ListCalls(ctx context.Context, p nodestore.ListCallsParams) ([]nodestore.Call, error) {
	if s.start != nil {
		s.start()
	}
	out, err := s.Store.ListCalls(ctx, p)
	if s.end != nil {
		s.end()
	}
	return out, err
}

// List shows the calls of the manager as they are, whatever happens during its read
// of the store: a call that ends meanwhile is listed as it ended, not as the active
// record the read found (its final record is saved before it leaves the manager,
// and List looks calls up as they were before the read too); a call that started
// just before the read is listed as it is now, not as its first record.
func TestListShowsCallsAsTheyAreAroundTheRead(t *testing.T) {
	t.Parallel()
	inner := newStore(t)
	store := &duringList{Store: inner}
	m := newManager(t, Options{Store: store})
	now := time.Now().UTC().Truncate(time.Millisecond)
	live := func(sid string, created time.Time) *liveCall {
		lc := &liveCall{done: make(chan struct{}), view: nodestore.Call{CallSid: sid, AccountSid: "a", CallStatus: "trying", Active: true, CreatedAt: created}}
		m.mu.Lock()
		m.calls[sid] = lc // as Start does: in the manager, then on record
		m.mu.Unlock()
		if err := inner.SaveCall(t.Context(), lc.view); err != nil {
			t.Fatal(err)
		}
		return lc
	}
	ending := live("ending", now)
	store.start = func() {
		starting := live("starting", now.Add(time.Millisecond))
		starting.mu.Lock()
		starting.view.CallStatus = "ringing"
		starting.mu.Unlock()
	}
	store.end = func() {
		ending.mu.Lock()
		ending.view.Active, ending.view.CallStatus, ending.view.Reason, ending.view.EndedAt = false, "completed", "hangup-verb", &now
		view := ending.view
		ending.mu.Unlock()
		m.end(zerolog.Nop(), ending, view)
	}
	got, err := m.List(t.Context(), nodestore.ListCallsParams{AccountSid: "a", Limit: 10})
	if err != nil || len(got) != 2 {
		t.Fatalf("List: %v, %v", got, err)
	}
	byID := map[string]nodestore.Call{got[0].CallSid: got[0], got[1].CallSid: got[1]}
	if c := byID["ending"]; c.Active || c.CallStatus != "completed" || c.Reason != "hangup-verb" {
		t.Errorf("listed %+v; want the call as it ended (completed, hangup-verb)", c)
	}
	if c := byID["starting"]; !c.Active || c.CallStatus != "ringing" {
		t.Errorf("listed %+v; want the call as it is now (active, ringing)", c)
	}
	m.mu.Lock()
	delete(m.calls, "starting") // no run of its own to end it
	m.mu.Unlock()
}
