package nodestoretest

import (
	"errors"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// testNodeLeases: a lease reads back with its URL, live until it expires; renewing
// it moves it; a lease of no time left is expired at once.
func testNodeLeases(t *testing.T, s nodestore.Store) {
	lease := func(id, url string, ttl time.Duration) {
		t.Helper()
		if err := s.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: id, URL: url, TTL: ttl}); err != nil {
			t.Fatalf("LeaseNode(%s): %v", id, err)
		}
	}
	get := func(id string) nodestore.Node {
		t.Helper()
		n, err := s.GetNode(ctx, id)
		if err != nil {
			t.Fatalf("GetNode(%s): %v", id, err)
		}
		return n
	}
	lease("a", "http://127.0.0.1:1", time.Hour)
	lease("b", "http://127.0.0.1:2", -time.Second)
	if n := get("a"); !n.Live || n.URL != "http://127.0.0.1:1" || n.ID != "a" || n.LeaseUntil.Location() != time.UTC {
		t.Fatalf("a live lease: %+v", n)
	}
	if n := get("b"); n.Live || n.URL != "http://127.0.0.1:2" {
		t.Fatalf("an expired lease: %+v", n)
	}
	first := get("a").LeaseUntil
	lease("a", "http://127.0.0.1:3", 2*time.Hour)
	if n := get("a"); !n.Live || n.URL != "http://127.0.0.1:3" || !n.LeaseUntil.After(first) {
		t.Fatalf("a renewed lease: %+v (it was until %v)", n, first)
	}
	lease("a", "http://127.0.0.1:3", 0)
	if n := get("a"); n.Live {
		t.Fatalf("a lease given up: %+v", n)
	}
	if _, err := s.GetNode(ctx, "nope"); !errors.Is(err, nodestore.ErrNotFound) {
		t.Fatalf("a node never seen: %v, want ErrNotFound", err)
	}
}

// testInterruptLostCalls: the active calls of nodes without a live lease, of no node,
// and of the node named Restarted are ended; those of a live node and ended calls are
// not; a second run finds none. LostCalls reads beforehand the same calls, oldest
// first, each with its Recovery, and none afterwards.
func testInterruptLostCalls(t *testing.T, s nodestore.Store) {
	for id, ttl := range map[string]time.Duration{"live": time.Hour, "dead": -time.Second, "restarting": time.Hour} {
		if err := s.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: id, URL: "http://" + id, TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	onNode := func(sid, node string, active bool) nodestore.Call {
		c := call("a", sid, t0, active)
		c.Node = node
		return c
	}
	withRecovery := onNode("lost", "dead", true)
	withRecovery.Recovery = &nodestore.CallRecovery{AppURL: "http://app.example/call",
		StatusHook: nodestore.HookSpec{URL: "/status", Method: "POST", Username: "u", Password: "p"},
		Fields:     map[string]any{"call_sid": "lost"}}
	newest := onNode("gone-node", "never-leased", true)
	newest.CreatedAt = t0.Add(time.Second)
	saveCalls(t, s,
		onNode("running", "live", true), withRecovery, onNode("over", "dead", false),
		onNode("previous-run", "restarting", true), onNode("no-node", "", true), newest,
	)
	p := nodestore.InterruptLostCallsParams{Restarted: "restarting"}
	lost, err := s.LostCalls(ctx, p)
	if err != nil || len(lost) != 4 || lost[0].CallSid != "lost" || lost[1].CallSid != "no-node" || lost[2].CallSid != "previous-run" ||
		!reflect.DeepEqual(lost[3], newest) || !reflect.DeepEqual(lost[0].Recovery, withRecovery.Recovery) || lost[1].Recovery != nil {
		t.Fatalf("LostCalls: %+v, %v; want lost (with its recovery), no-node, previous-run, gone-node", lost, err)
	}
	var seen []string
	end := func(c nodestore.Call) nodestore.Call {
		seen = append(seen, c.CallSid)
		c.Active, c.CallStatus, c.Reason = false, "failed", "node-lost:"+c.Node
		return c
	}
	n, err := s.InterruptLostCalls(ctx, p, end)
	sort.Strings(seen)
	if want := []string{"gone-node", "lost", "no-node", "previous-run"}; err != nil || n != len(want) || !slices.Equal(seen, want) {
		t.Fatalf("interrupted %d %v (%v), want %v", n, seen, err, want)
	}
	if got, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "lost"}); err != nil || got.Active || got.Reason != "node-lost:dead" || got.Node != "dead" {
		t.Fatalf("the lost call: %+v, %v", got, err)
	}
	if got, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "running"}); err != nil || !got.Active || got.Reason != "" {
		t.Fatalf("the live node's call was touched: %+v, %v", got, err)
	}
	if got, err := s.GetCall(ctx, nodestore.GetCallParams{AccountSid: "a", CallSid: "over"}); err != nil || got.Reason != "" {
		t.Fatalf("an ended call was touched: %+v, %v", got, err)
	}
	seen = nil
	if n, err := s.InterruptLostCalls(ctx, nodestore.InterruptLostCallsParams{}, end); err != nil || n != 0 || len(seen) != 0 {
		t.Fatalf("a second run: %d (%v), %v; want none", n, seen, err)
	}
	if lost, err := s.LostCalls(ctx, p); err != nil || len(lost) != 0 {
		t.Fatalf("LostCalls after InterruptLostCalls: %+v, %v; want none", lost, err)
	}
}
