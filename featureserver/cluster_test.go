package featureserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/calls"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
	"github.com/switchboard-voice/switchboard/outbox"
)

// pgConfig is testConfig on the PostgreSQL schema dbURL, as node id.
func pgConfig(t *testing.T, dbURL, id string) Config {
	cfg := testConfig(t)
	cfg.DatabaseURL = dbURL
	cfg.Cluster.NodeID = id
	cfg.Cluster.Lease = time.Second // the least: a lost node's calls end soon
	return cfg
}

// Two nodes on one PostgreSQL schema: each lists the other's calls; live control sent
// to the node that does not run a call reaches the one that does, and a call ended
// answers 409 from either; an account's calls stay its own across nodes.
func TestNodesShareCallsOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	a := runNode(t, pgConfig(t, dbURL, "node-a"))
	b := runNode(t, pgConfig(t, dbURL, "node-b"))
	acct := a.createAccount("acme")
	other := b.createAccount("other")
	sid := waitingCall(t, a, acct)
	path := "/v1/Accounts/" + acct.AccountSid + "/Calls/" + sid

	var listed []nodeapi.CallView
	if code, _, raw := b.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, nil, &listed); code != http.StatusOK || len(listed) != 1 ||
		listed[0].CallSid != sid || !listed[0].Active || listed[0].Node != "node-a" {
		t.Fatalf("node b lists %d %s", code, raw)
	}
	// Read through node b: the call as node a has it now, its timeline included (the
	// shared record, saved at the call's start, has none yet). The call may still be
	// taking its ack between the two reads: b's timeline is a's, then perhaps more.
	var fromA, fromB nodeapi.CallView
	a.do("GET", path, acct.APIToken, nil, &fromA)
	if code, _, raw := b.do("GET", path, acct.APIToken, nil, &fromB); code != http.StatusOK || len(fromA.Timeline) == 0 ||
		len(fromB.Timeline) < len(fromA.Timeline) || !slices.EqualFunc(fromA.Timeline, fromB.Timeline[:len(fromA.Timeline)], func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
		t.Fatalf("node b reads %d %s; node a had %d timeline events before", code, raw, len(fromA.Timeline))
	}
	if code, _, _ := b.do("POST", "/v1/Accounts/"+other.AccountSid+"/Calls/"+sid, other.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusNotFound {
		t.Fatalf("another account's hangup through node b: %d, want 404", code)
	}
	if code, _, raw := b.do("PUT", path, acct.APIToken, map[string]any{"mute_status": "mute"}, nil); code != http.StatusNoContent || len(raw) != 0 {
		t.Fatalf("mute through node b: %d %q, want 204 and no body", code, raw)
	}
	var accepted struct{ CallSid, Status string }
	if code, _, raw := b.do("POST", path, acct.APIToken, map[string]any{"call_status": "completed"}, &accepted); code != http.StatusAccepted || accepted.Status != "hanging up" {
		t.Fatalf("hang up through node b: %d %s", code, raw)
	}
	if v := a.waitCall(acct, sid); v.Reason != "api-hangup" {
		t.Fatalf("the call ended with %q, want api-hangup", v.Reason)
	}
	for _, n := range []*testNode{a, b} {
		if code, _, raw := n.do("POST", path, acct.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusConflict {
			t.Errorf("hanging up the ended call: %d %s, want 409", code, raw)
		}
	}
	// A request a node forwarded is never forwarded again.
	sid2 := waitingCall(t, a, acct)
	code, _, _ := b.doWith("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+sid2, acct.APIToken, map[string]any{"call_status": "completed"},
		http.Header{nodeapi.ForwardedHeader: {"node-c"}})
	if code != http.StatusNotFound {
		t.Fatalf("a forwarded request for a call not here: %d, want 404", code)
	}
	a.do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+sid2, acct.APIToken, map[string]any{"call_status": "completed"}, nil)
	a.waitCall(acct, sid2)

	// Deleting a call through the node that does not run it: the node that runs it
	// hangs it up and deletes the record, which it then does not save again.
	sid3 := waitingCall(t, a, acct)
	path3 := "/v1/Accounts/" + acct.AccountSid + "/Calls/" + sid3
	if code, _, raw := b.do("DELETE", path3, acct.APIToken, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete through node b: %d %s", code, raw)
	}
	for _, n := range []*testNode{a, b} {
		if code, _, raw := n.do("GET", path3, acct.APIToken, nil, nil); code != http.StatusNotFound {
			t.Errorf("the deleted call read from a node: %d %s, want 404", code, raw)
		}
	}
	if a.node.calls.Active() != 0 {
		t.Errorf("node a still runs %d calls after the deletion", a.node.calls.Active())
	}

	// A node drained gives its lease up: the others need not wait for it to expire.
	st, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.GetNode(context.Background(), "node-a"); err != nil || !n.Live || n.URL != a.base {
		t.Fatalf("node-a's lease while it runs: %+v, %v (it listens at %s)", n, err, a.base)
	}
	a.stop()
	if n, err := st.GetNode(context.Background(), "node-a"); err != nil || n.Live {
		t.Fatalf("node-a's lease after its drain: %+v, %v", n, err)
	}
}

// openStoreWithAccount opens the PostgreSQL store at dbURL, as the cluster's nodes
// share it, with the account "acct" in it; it is closed when the test ends.
func openStoreWithAccount(t *testing.T, dbURL string) *pgnode.Store {
	t.Helper()
	st, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.PutAccount(context.Background(), nodestore.PutAccountParams{Account: nodestore.Account{Sid: "acct", Name: "x", CreatedAt: time.Now()},
		TokenHash: nodestore.HashToken("token-of-acct-0123456789"), Origin: nodestore.TokenFromAPI}); err != nil {
		t.Fatal(err)
	}
	return st
}

// A node whose lease expired has its active calls recorded as ended by a node that
// runs, the reason naming it; live control of them answers 503 meanwhile, not an
// error of the dead node's address. A call of a live node is left alone.
func TestLostNodesCallsEndOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	st := openStoreWithAccount(t, dbURL)
	ctx := context.Background()
	// The dead node's lease ends in a minute, long after the first checks below.
	if err := st.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: "dead", URL: "http://127.0.0.1:1", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := st.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: "alive", URL: "http://127.0.0.1:1", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	for sid, node := range map[string]string{"lost-call": "dead", "live-call": "alive"} {
		c := nodestore.Call{CallSid: sid, AccountSid: "acct", Node: node, Active: true, CallStatus: "in-progress", CreatedAt: time.Now().UTC()}
		if err := st.SaveCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	n := runNode(t, pgConfig(t, dbURL, "survivor"))
	acct := testAccount{AccountSid: "acct", APIToken: "token-of-acct-0123456789"}
	if code, _, raw := n.do("POST", "/v1/Accounts/acct/Calls/lost-call", acct.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusBadGateway {
		t.Fatalf("control of a call on a node that does not answer: %d %s, want 502", code, raw)
	}
	if err := st.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: "dead", URL: "http://127.0.0.1:1", TTL: -time.Second}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	poll := time.NewTicker(20 * time.Millisecond) // the survivor's sweep runs every third of its lease
	defer poll.Stop()
	for {
		c, err := st.GetCall(ctx, nodestore.GetCallParams{AccountSid: "acct", CallSid: "lost-call"})
		if err != nil {
			t.Fatal(err)
		}
		if !c.Active {
			if c.Reason != calls.LostReason("dead") || c.CallStatus != "completed" || c.EndedAt == nil {
				t.Fatalf("the lost call was recorded as %+v", c)
			}
			break
		}
		if code, _, raw := n.do("POST", "/v1/Accounts/acct/Calls/lost-call", acct.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusServiceUnavailable && code != http.StatusConflict {
			t.Fatalf("control of a call of a lost node: %d %s, want 503", code, raw)
		}
		if time.Now().After(deadline) {
			t.Fatal("the lost node's call is still active")
		}
		<-poll.C
	}
	var live nodeapi.CallView
	if code, _, raw := n.do("GET", "/v1/Accounts/acct/Calls/live-call", acct.APIToken, nil, &live); code != http.StatusOK || !live.Active {
		t.Fatalf("the live node's call: %d %s", code, raw)
	}
}

// On PostgreSQL the calls a node ends for others get their final status
// notifications as those a restart ends do: at start, the calls of its own previous
// run (node-restart) and of a node whose lease expired; later, by the sweep, those of
// a node whose lease expires while it runs (node-lost). Each record names its
// notification's delivery; a live node's call gets none.
func TestFinalStatusOfCallsEndedForOthersOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	got := make(chan map[string]any, 8)
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		_ = json.NewDecoder(r.Body).Decode(&p)
		got <- p
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(status.Close)
	st := openStoreWithAccount(t, dbURL)
	ctx := context.Background()
	for id, ttl := range map[string]time.Duration{"gone": -time.Second, "dying": time.Minute, "alive": time.Hour} {
		if err := st.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: id, URL: "http://127.0.0.1:1", TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	for sid, c := range map[string]struct{ node, status string }{
		"previous-run": {"self", "ringing"}, "of-gone": {"gone", "in-progress"}, "of-dying": {"dying", "in-progress"}, "of-alive": {"alive", "in-progress"},
	} {
		rec := nodestore.Call{CallSid: sid, AccountSid: "acct", Node: c.node, Active: true, CallStatus: c.status, CreatedAt: time.Now().UTC(),
			Recovery: &nodestore.CallRecovery{AppURL: "http://127.0.0.1:1/call", StatusHook: nodestore.HookSpec{URL: status.URL + "/status"},
				Fields: map[string]any{"call_sid": sid}}}
		if err := st.SaveCall(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	n := runNode(t, pgConfig(t, dbURL, "self"))
	want := map[string][2]any{"previous-run": {"failed", float64(487)}, "of-gone": {"completed", float64(200)}}
	receive := func() {
		t.Helper()
		for len(want) > 0 {
			select {
			case p := <-got:
				sid, _ := p["call_sid"].(string)
				w, ok := want[sid]
				if !ok || p["call_status"] != w[0] || p["sip_status"] != w[1] {
					t.Fatalf("notification %v; want those of %v", p, want)
				}
				delete(want, sid)
			case <-time.After(20 * time.Second):
				t.Fatalf("no final notification of %v", want)
			}
		}
	}
	receive()
	if err := st.LeaseNode(ctx, nodestore.LeaseNodeParams{ID: "dying", URL: "http://127.0.0.1:1", TTL: -time.Second}); err != nil {
		t.Fatal(err)
	}
	want = map[string][2]any{"of-dying": {"completed", float64(200)}}
	receive() // the sweep's, every third of the lease
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for sid, reason := range map[string]string{"previous-run": calls.ReasonNodeRestart, "of-gone": calls.LostReason("gone"), "of-dying": calls.LostReason("dying")} {
		var v nodestore.Call
		// The record is ended in the sweep's transaction after the notification
		// is queued: poll for it.
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, _, raw := n.do("GET", "/v1/Accounts/acct/Calls/"+sid, "token-of-acct-0123456789", nil, &v)
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", sid, code, raw)
			}
			if !v.Active {
				if v.Reason != reason || len(v.StatusDeliveries) != 1 {
					t.Fatalf("%s: %s; want ended as %s naming its delivery", sid, raw, reason)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still active", sid)
			}
			<-poll.C
		}
	}
	events, err := n.node.outbox.ListEvents(ctx, outbox.EventQuery{Account: "acct", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(e.ID, "of-alive") {
			t.Errorf("the live node's call got a notification: %s", e.ID)
		}
	}
}
