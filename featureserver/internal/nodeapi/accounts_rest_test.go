package nodeapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type adminAccount struct {
	AccountSid          string     `json:"account_sid"`
	Name                string     `json:"name"`
	WebhookSecret       string     `json:"webhook_secret"`
	StatusWebhookSecret string     `json:"status_webhook_secret"`
	PreviousSecretUntil *time.Time `json:"previous_secret_until"`
}

// The admin token lists, renames and deletes accounts; an account's token may do
// none of it; a deleted account's token stops working and its objects go.
func TestAccountAdministration(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	a, b := n.createAccount("a"), n.createAccount("b")
	var list []adminAccount
	if code, _, raw := n.do("GET", "/v1/Accounts", testAdminToken, nil, &list); code != http.StatusOK || len(list) != 2 ||
		list[0].AccountSid != a.AccountSid || list[1].AccountSid != b.AccountSid || list[0].WebhookSecret != a.WebhookSecret {
		t.Fatalf("list: %d %s", code, raw)
	}
	var renamed adminAccount
	if code, _, raw := n.do("PUT", "/v1/Accounts/"+a.AccountSid, testAdminToken, map[string]any{"name": "acme"}, &renamed); code != http.StatusOK || renamed.Name != "acme" {
		t.Fatalf("rename: %d %s", code, raw)
	}
	for _, op := range []struct{ method, path string }{
		{"GET", "/v1/Accounts"}, {"PUT", "/v1/Accounts/" + a.AccountSid}, {"DELETE", "/v1/Accounts/" + a.AccountSid},
		{"POST", "/v1/Accounts/" + a.AccountSid + "/ApiToken"}, {"POST", "/v1/Accounts/" + a.AccountSid + "/WebhookSecret"},
	} {
		if code, _, raw := n.do(op.method, op.path, a.APIToken, map[string]any{"name": "x"}, nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s with the account's own token: %d %s, want 401", op.method, op.path, code, raw)
		}
	}
	for _, op := range []struct{ method, path string }{
		{"PUT", "/v1/Accounts/nope"}, {"DELETE", "/v1/Accounts/nope"}, {"POST", "/v1/Accounts/nope/ApiToken"}, {"POST", "/v1/Accounts/nope/WebhookSecret"},
	} {
		var body any
		if op.method == "PUT" {
			body = map[string]any{"name": "x"}
		}
		if code, _, raw := n.do(op.method, op.path, testAdminToken, body, nil); code != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", op.method, op.path, code, raw)
		}
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/Applications", a.APIToken, map[string]any{"name": "x", "call_hook": "http://127.0.0.1/"}, nil); code != http.StatusCreated {
		t.Fatalf("create application: %d %s", code, raw)
	}
	if code, _, raw := n.do("DELETE", "/v1/Accounts/"+a.AccountSid, testAdminToken, nil, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, raw)
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+a.AccountSid+"/Applications", a.APIToken, nil, nil); code != http.StatusUnauthorized {
		t.Errorf("a deleted account's token: %d, want 401", code)
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+b.AccountSid, b.APIToken, nil, nil); code != http.StatusOK {
		t.Errorf("the other account: %d", code)
	}
	list = nil
	if n.do("GET", "/v1/Accounts", testAdminToken, nil, &list); len(list) != 1 || list[0].AccountSid != b.AccountSid {
		t.Errorf("after the delete: %+v", list)
	}
}

// Rotating the API token revokes every earlier one at once.
func TestRotateAPIToken(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	a := n.createAccount("a")
	var rotated struct {
		APIToken string `json:"api_token"`
	}
	if code, _, raw := n.do("POST", "/v1/Accounts/"+a.AccountSid+"/ApiToken", testAdminToken, nil, &rotated); code != http.StatusCreated || rotated.APIToken == "" {
		t.Fatalf("rotate: %d %s", code, raw)
	}
	if code, _, _ := n.do("GET", "/v1/Accounts/"+a.AccountSid, a.APIToken, nil, nil); code != http.StatusUnauthorized {
		t.Errorf("the old token: %d, want 401", code)
	}
	if code, _, raw := n.do("GET", "/v1/Accounts/"+a.AccountSid, rotated.APIToken, nil, nil); code != http.StatusOK {
		t.Errorf("the new token: %d %s", code, raw)
	}
}

// Bad input to the account operations gets a problem naming the field and changes
// nothing.
func TestAccountBadInput(t *testing.T) {
	t.Parallel()
	n := startAPI(t, apiSetup{})
	a := n.createAccount("a")
	acct := "/v1/Accounts/" + a.AccountSid
	for _, tc := range []struct {
		name, method, path, body, field string
	}{
		{"name of a wrong type", "PUT", acct, `{"name":5}`, "body.name"},
		{"empty name", "PUT", acct, `{"name":""}`, "body.name"},
		{"unknown field", "PUT", acct, `{"name":"x","colour":1}`, "body.colour"},
		{"negative grace", "POST", acct + "/WebhookSecret", `{"grace_period_seconds":-1}`, "body.grace_period_seconds"},
		{"grace too long", "POST", acct + "/WebhookSecret", `{"grace_period_seconds":2592001}`, "body.grace_period_seconds"},
		{"grace of a wrong type", "POST", acct + "/WebhookSecret", `{"grace_period_seconds":"1h"}`, "body.grace_period_seconds"},
		{"unknown rotation field", "POST", acct + "/WebhookSecret", `{"keep_old":true}`, "body.keep_old"},
	} {
		code, _, raw := n.do(tc.method, tc.path, testAdminToken, tc.body, nil)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(raw), `"location":"`+tc.field+`"`) {
			t.Errorf("%s: %d %s, want 422 naming %s", tc.name, code, raw, tc.field)
		}
	}
	var got adminAccount
	if code, _, raw := n.do("GET", acct, a.APIToken, nil, &got); code != http.StatusOK || got.Name != "a" || got.WebhookSecret != a.WebhookSecret || got.PreviousSecretUntil != nil {
		t.Errorf("after bad input: %d %s, want the account unchanged", code, raw)
	}
}
