package featureserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/calls"
	"github.com/switchboard-voice/switchboard/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/nodestore/pgnode"
	"github.com/switchboard-voice/switchboard/internal/pgtest"
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
	// shared record, saved at the call's start, has none yet).
	var fromA, fromB nodeapi.CallView
	a.do("GET", path, acct.APIToken, nil, &fromA)
	if code, _, raw := b.do("GET", path, acct.APIToken, nil, &fromB); code != http.StatusOK || len(fromB.Timeline) == 0 || len(fromB.Timeline) != len(fromA.Timeline) {
		t.Fatalf("node b reads %d %s; node a has %d timeline events", code, raw, len(fromA.Timeline))
	}
	if code, _, _ := b.do("POST", "/v1/Accounts/"+other.AccountSid+"/Calls/"+sid, other.APIToken, map[string]any{"call_status": "completed"}, nil); code != http.StatusNotFound {
		t.Fatalf("another account's hangup through node b: %d, want 404", code)
	}
	if code, _, raw := b.do("POST", path, acct.APIToken, map[string]any{"mute_status": "mute"}, nil); code != http.StatusAccepted {
		t.Fatalf("mute through node b: %d %s", code, raw)
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

// A node whose lease expired has its active calls recorded as ended by a node that
// runs, the reason naming it; live control of them answers 503 meanwhile, not an
// error of the dead node's address. A call of a live node is left alone.
func TestLostNodesCallsEndOnPostgres(t *testing.T) {
	t.Parallel()
	dbURL, _ := pgtest.Schema(t)
	st, err := pgnode.OpenURL(context.Background(), dbURL, pgnode.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.PutAccount(ctx, nodestore.PutAccountParams{Account: nodestore.Account{Sid: "acct", Name: "x", CreatedAt: time.Now()},
		TokenHash: nodestore.HashToken("token-of-acct-0123456789"), Origin: nodestore.TokenFromAPI}); err != nil {
		t.Fatal(err)
	}
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
