package nodestoretest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

func call(account, sid string, created time.Time, active bool) nodestore.Call {
	return nodestore.Call{CallSid: sid, AccountSid: account, ApplicationSid: "app", From: "+15550001", To: "+15550002",
		Direction: "inbound", CallStatus: "trying", Active: active, CreatedAt: created}
}

// testSaveCall: a call's record reads back exactly as saved (times to the
// nanosecond, its timeline as written); saving it again replaces its state and
// timeline; another account never sees it.
func testSaveCall(t *testing.T, s nodestore.Store) {
	c := call("a", "call1", t0.Add(123456789), true)
	c.Node = "node-1"
	saveCalls(t, s, c)
	got, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "call1"})
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("GetCall: %+v, %v; want %+v", got, err, c)
	}
	ended := t0.Add(5*time.Second + 7)
	done := c
	done.Active, done.CallStatus, done.Reason, done.SipStatus, done.EndedAt = false, "completed", "hangup-verb", 200, &ended
	done.ExpectationsFailed = []string{"verbs: want [say]"}
	done.Timeline = []json.RawMessage{json.RawMessage(`{"t_ms":0,"kind":"call.start"}`), json.RawMessage(`{"t_ms":5000,"kind":"call.end"}`)}
	saveCalls(t, s, done)
	got, err = s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "call1"})
	if err != nil || !reflect.DeepEqual(got, done) {
		t.Fatalf("after saving again: %+v, %v; want %+v", got, err, done)
	}
	if calls, err := s.ListCalls(ctx, nodestore.ListCallsParams{AccountSid: "b", Limit: 10}); err != nil || len(calls) != 0 {
		t.Fatalf("another account's listing: %+v, %v", calls, err)
	}
	if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "nope"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a missing call: %v, want ErrNotFound", err)
	}
}

// testListCalls: the account's calls, newest first (then by sid), at most the limit,
// each with its whole record.
func testListCalls(t *testing.T, s nodestore.Store) {
	saved := []nodestore.Call{
		call("a", "old", t0, false),
		call("a", "new-b", t0.Add(time.Minute), true),
		call("a", "new-a", t0.Add(time.Minute), false),
		call("a", "mid", t0.Add(time.Second), false),
		call("b", "other", t0.Add(time.Hour), false),
	}
	saved[0].Timeline = []json.RawMessage{json.RawMessage(`{"kind":"call.start"}`)}
	saveCalls(t, s, saved...)
	list := func(limit int) []string {
		t.Helper()
		calls, err := s.ListCalls(ctx, nodestore.ListCallsParams{AccountSid: "a", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		sids := []string{}
		for _, c := range calls {
			sids = append(sids, c.CallSid)
			if c.CallSid == "old" && !reflect.DeepEqual(c, saved[0]) {
				t.Errorf("listed record %+v, want %+v", c, saved[0])
			}
		}
		return sids
	}
	if got, want := list(10), []string{"new-a", "new-b", "mid", "old"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if got, want := list(2), []string{"new-a", "new-b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("with limit 2: %v, want %v", got, want)
	}
}

// testInterruptActiveCalls: every call saved as active, and only those, is replaced
// by what end makes of it and saved as not active; a second run finds none.
func testInterruptActiveCalls(t *testing.T, s nodestore.Store) {
	saveCalls(t, s, call("a", "live1", t0, true), call("b", "live2", t0, true), call("a", "ended", t0, false))
	var seen []string
	end := func(c nodestore.Call) nodestore.Call {
		seen = append(seen, c.CallSid)
		c.Active, c.CallStatus, c.Reason = false, "failed", "node-restart"
		return c
	}
	n, err := s.InterruptActiveCalls(ctx, end)
	if err != nil || n != 2 || len(seen) != 2 {
		t.Fatalf("interrupted %d (%v), %v; want the 2 active calls", n, seen, err)
	}
	for _, c := range []nodestore.GetCallParams{{AccountSid: "a", CallSid: "live1"}, {AccountSid: "b", CallSid: "live2"}} {
		got, err := s.GetCall(ctx, c)
		if err != nil || got.Active || got.Reason != "node-restart" || got.CallStatus != "failed" {
			t.Fatalf("%s after the interruption: %+v, %v", c.CallSid, got, err)
		}
	}
	if got, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "ended"}); err != nil || got.Reason != "" {
		t.Fatalf("an ended call was touched: %+v, %v", got, err)
	}
	seen = nil
	if n, err := s.InterruptActiveCalls(ctx, end); err != nil || n != 0 || len(seen) != 0 {
		t.Fatalf("a second run: %d (%v), %v; want none", n, seen, err)
	}
}

// testActiveCalls: the active calls, oldest first, each with its Recovery (which
// GetCall and ListCalls never return); a call saved as ended is not among them.
func testActiveCalls(t *testing.T, s nodestore.Store) {
	first, second, ended := call("a", "live1", t0, true), call("b", "live2", t0.Add(time.Second), true), call("a", "ended", t0, false)
	second.Recovery = &nodestore.CallRecovery{AppURL: "http://app.example/call",
		StatusHook: nodestore.HookSpec{URL: "/status", Method: "POST", Username: "u", Password: "p"},
		Fields:     map[string]any{"call_sid": "live2", "customerData": map[string]any{"k": "v"}}}
	saveCalls(t, s, second, first, ended)
	got, err := s.ActiveCalls(ctx)
	if err != nil || len(got) != 2 || !reflect.DeepEqual(got[0], first) || !reflect.DeepEqual(got[1], second) {
		t.Fatalf("ActiveCalls: %+v, %v; want %+v and %+v", got, err, first, second)
	}
	if c, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "b", CallSid: "live2"}); err != nil || c.Recovery != nil {
		t.Fatalf("GetCall returned the recovery: %+v, %v", c, err)
	}
	if _, err := s.InterruptActiveCalls(ctx, func(c nodestore.Call) nodestore.Call { return c }); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ActiveCalls(ctx); err != nil || len(got) != 0 {
		t.Fatalf("after InterruptActiveCalls: %+v, %v; want none", got, err)
	}
}

// testListCallsPages: a listing continued from each page's last call neither
// repeats nor skips a call while newer calls are saved between the pages; the
// filters (status, direction, creation-time range) apply with the cursor.
func testListCallsPages(t *testing.T, s nodestore.Store) {
	var want []string
	for i := range 7 {
		c := call("a", "c"+string(rune('0'+i)), t0.Add(time.Duration(i/2)*time.Second), false) // pairs share a time
		if i%3 == 0 {
			c.Direction, c.CallStatus = "outbound", "completed"
		}
		saveCalls(t, s, c)
	}
	want = []string{"c6", "c4", "c5", "c2", "c3", "c0", "c1"}
	var got []string
	var after *nodestore.CallKey
	for page := 0; ; page++ {
		calls, err := s.ListCalls(ctx, nodestore.ListCallsParams{AccountSid: "a", Limit: 2, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			got = append(got, c.CallSid)
		}
		if len(calls) < 2 {
			break
		}
		last := calls[len(calls)-1]
		after = &nodestore.CallKey{CreatedAt: last.CreatedAt, Sid: last.CallSid}
		// A newer call arrives between pages: it is not on a later page.
		saveCalls(t, s, call("a", "new"+string(rune('0'+page)), t0.Add(time.Hour), true))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}
	filtered := func(p nodestore.ListCallsParams) []string {
		t.Helper()
		p.AccountSid = "a"
		calls, err := s.ListCalls(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		sids := []string{}
		for _, c := range calls {
			sids = append(sids, c.CallSid)
		}
		return sids
	}
	for _, tc := range []struct {
		p    nodestore.ListCallsParams
		want []string
	}{
		{nodestore.ListCallsParams{Limit: 10, Direction: "outbound"}, []string{"c6", "c3", "c0"}},
		{nodestore.ListCallsParams{Limit: 10, Status: "completed", Direction: "outbound", After: &nodestore.CallKey{CreatedAt: t0.Add(3 * time.Second), Sid: "c6"}}, []string{"c3", "c0"}},
		{nodestore.ListCallsParams{Limit: 10, Since: t0.Add(time.Second), Until: t0.Add(3 * time.Second)}, []string{"c4", "c5", "c2", "c3"}},
		{nodestore.ListCallsParams{Limit: 10, Status: "trying", Until: t0.Add(time.Second)}, []string{"c1"}},
	} {
		if got := filtered(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListCalls(%+v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// testDeleteCall: the record goes; another account's call of that sid is
// ErrNotFound and stays.
func testDeleteCall(t *testing.T, s nodestore.Store) {
	saveCalls(t, s, call("a", "c", t0, false))
	if err := s.DeleteCall(ctx, nodestore.GetCallParams{AccountSid: "b", CallSid: "c"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("another account deleting it: %v, want ErrNotFound", err)
	}
	if err := s.DeleteCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "c"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("after the delete: %v", err)
	}
	if err := s.DeleteCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "c"}); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
}

// testPurgeCalls: the oldest records before the bound go, at most the limit at a
// time, never an active call's nor a newer one.
func testPurgeCalls(t *testing.T, s nodestore.Store) {
	saveCalls(t, s,
		call("a", "old1", t0, false), call("b", "old2", t0.Add(time.Millisecond), false), call("a", "old3", t0.Add(2*time.Millisecond), false),
		call("a", "live", t0, true), call("a", "new", t0.Add(time.Hour), false),
	)
	p := nodestore.PurgeCallsParams{Before: t0.Add(time.Minute), Limit: 2}
	if n, err := s.PurgeCalls(ctx, p); err != nil || n != 2 {
		t.Fatalf("first batch: %d, %v; want 2", n, err)
	}
	for _, g := range []nodestore.GetCallParams{{AccountSid: "a", CallSid: "old1"}, {AccountSid: "b", CallSid: "old2"}} {
		if _, err := s.GetCall(ctx, g); !errors.Is(err, nodestore.ErrNotFound) {
			t.Fatalf("%s after the first batch: %v; want purged (oldest first)", g.CallSid, err)
		}
	}
	if n, err := s.PurgeCalls(ctx, p); err != nil || n != 1 {
		t.Fatalf("second batch: %d, %v; want 1", n, err)
	}
	if n, err := s.PurgeCalls(ctx, p); err != nil || n != 0 {
		t.Fatalf("third batch: %d, %v; want 0", n, err)
	}
	for _, sid := range []string{"live", "new"} {
		if _, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: sid}); err != nil {
			t.Fatalf("%s was purged: %v", sid, err)
		}
	}
}

// saveCalls saves the calls in order.
func saveCalls(t *testing.T, s nodestore.Store, calls ...nodestore.Call) {
	t.Helper()
	for _, c := range calls {
		if err := s.SaveCall(ctx, c); err != nil {
			t.Fatalf("SaveCall(%s): %v", c.CallSid, err)
		}
	}
}
