package featureserver

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/outbox"
)

// A call a crashed run left active, with a status hook, gets its final status
// notification at the next start: its call info with the final status.
func TestRestartSendsTheFinalStatusOfCallsCutShort(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]any, 4)
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		got <- p
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(status.Close)
	first := startNode(t, nil)
	acct := first.createAccount("acme")
	cut := nodestore.Call{CallSid: "cut", AccountSid: acct.AccountSid, CallStatus: "in-progress", Active: true, CreatedAt: time.Now().UTC(),
		Recovery: &nodestore.CallRecovery{AppURL: "http://127.0.0.1:1/call", StatusHook: nodestore.HookSpec{URL: status.URL + "/status"},
			Fields: map[string]any{"call_sid": "cut", "call_id": "cid", "customerData": map[string]any{"k": "v"}}}}
	if err := first.node.store.SaveCall(context.Background(), cut); err != nil {
		t.Fatal(err)
	}
	first.stop()
	again := startNodeOn(t, first)
	select {
	case p := <-got:
		if p["call_sid"] != "cut" || p["call_status"] != "completed" || p["sip_status"] != float64(200) || p["call_id"] != "cid" {
			t.Errorf("final notification %v", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no final notification after the restart")
	}
	var v nodestore.Call
	if code, _, raw := again.do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/cut", acct.APIToken, nil, &v); code != http.StatusOK ||
		v.Active || v.Reason != "node-restart" || len(v.StatusDeliveries) != 1 {
		t.Errorf("the call after the restart: %d %s", code, raw)
	}
}

// A call whose final notification went out before the crash (its record not saved
// yet) gets none again at the next start: the call's notifications stay its
// in-progress and its one final, the final as the call sent it.
func TestRestartSendsNoSecondFinalStatus(t *testing.T) {
	t.Parallel()
	first := startNode(t, nil)
	acct := first.createAccount("acme")
	hook := nodestore.HookSpec{URL: "http://127.0.0.1:1/status"}
	fields := map[string]any{"call_sid": "cut", "call_id": "cid"}
	cut := nodestore.Call{CallSid: "cut", AccountSid: acct.AccountSid, CallStatus: "in-progress", Active: true, CreatedAt: time.Now().UTC(),
		Recovery: &nodestore.CallRecovery{AppURL: "http://127.0.0.1:1/call", StatusHook: hook, Fields: fields}}
	if err := first.node.store.SaveCall(context.Background(), cut); err != nil {
		t.Fatal(err)
	}
	account, err := first.node.store.GetAccount(context.Background(), acct.AccountSid)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := fragment.Parse(hook.URL)
	for _, st := range []string{"in-progress", "completed"} {
		p := maps.Clone(fields)
		p["call_status"], p["sip_status"], p["note"] = st, 200, "sent by the call"
		if err := first.node.status.Notify(context.Background(), account, hook, target, p); err != nil {
			t.Fatal(err)
		}
	}
	first.stop()
	again := startNodeOn(t, first)
	events, err := again.node.outbox.ListEvents(context.Background(), outbox.EventQuery{Account: acct.AccountSid, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range events {
		ids = append(ids, e.ID)
		if strings.HasSuffix(e.ID, ":final") && !strings.Contains(string(e.Data), "sent by the call") {
			t.Errorf("the final notification was replaced: %s", e.Data)
		}
	}
	slices.Sort(ids)
	if want := []string{"call-status:cut:1", "call-status:cut:final"}; !slices.Equal(ids, want) {
		t.Errorf("events %v, want %v", ids, want)
	}
}
