package featureserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
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
