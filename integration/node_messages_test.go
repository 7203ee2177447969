package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeMessagesAndRecentCalls: the node answers jambonz-api-server's Messages and
// RecentCalls. @jambonz/node-client's messages.create sends an SMS (simulated: the
// node records it and tells its actionHook success, through the outbox);
// RecentCalls lists ended calls as call detail records, paged, and refuses a
// request without page or count as jambonz does (400).
func TestNodeMessagesAndRecentCalls(t *testing.T) {
	t.Parallel()
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	sdk := startRESTClient(t, p.base)
	a := p.account()
	hooks := newHookReceiver(t)
	hooks.script("/sms-status", func(int) (int, string) { return 200, "" })

	sid := decode[string](t, sdk.must(a.AccountSid, a.APIToken, "messages", "create", map[string]any{
		"from": "+15550001111", "to": "+15550002222", "text": "your code is 1234", "actionHook": hooks.URL + "/sms-status"}))
	if len(sid) != 36 {
		t.Fatalf("messages.create returned %q, want the message sid", sid)
	}
	deadline := time.Now().Add(appEventTimeout)
	for len(hooks.requests("/sms-status")) == 0 && time.Now().Before(deadline) {
		time.Sleep(25 * time.Millisecond)
	}
	got := hooks.requests("/sms-status")
	if len(got) == 0 {
		t.Fatal("the message's actionHook was never called")
	}
	var status map[string]any
	if err := json.Unmarshal(got[0].body, &status); err != nil || status["message_sid"] != sid || status["message_status"] != "success" {
		t.Errorf("actionHook body %s", got[0].body)
	}
	if r := sdk.call(a.AccountSid, a.APIToken, "messages", "create", map[string]any{"from": "+1", "to": "+2"}); r.OK || r.StatusCode != http.StatusBadRequest {
		t.Errorf("a message without text or media: %+v, want 400", r)
	}

	app := verbsApp(t, `[{"verb":"say","text":"hi"},{"verb":"hangup"}]`)
	callSid := p.startCallTo(a, app.URL)
	p.waitCall(a, callSid)
	var page struct {
		Total, Batch, Page int
		Data               []map[string]any
	}
	if code, raw := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/RecentCalls?page=1&count=25", a.APIToken, nil, &page); code != http.StatusOK {
		t.Fatalf("RecentCalls: %d %s", code, raw)
	}
	if page.Total != 1 || page.Batch != 1 || page.Page != 1 || page.Data[0]["call_sid"] != callSid || page.Data[0]["answered"] != true ||
		page.Data[0]["direction"] != "outbound" || page.Data[0]["attempted_at"] == nil {
		t.Errorf("RecentCalls = %+v", page)
	}
	if code, _ := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/RecentCalls?count=25", a.APIToken, nil, nil); code != http.StatusBadRequest {
		t.Errorf("RecentCalls without page: %d, want 400", code)
	}
	if code, _ := p.do("GET", "/v1/Accounts/"+a.AccountSid+"/RecentCalls?page=1&count=25&answered=false", a.APIToken, nil, &page); code != http.StatusOK || page.Total != 0 {
		t.Errorf("RecentCalls answered=false: %d %+v", code, page)
	}
}
