package outboxapi_test

import (
	"net/http"
	"testing"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// A consumer portal's caller confined to one endpoint reaches that endpoint and its
// deliveries, and nothing else: another endpoint is 404 (as another account's), the
// listing shows its one, creating, publishing, events and the audit log are refused.
// A consumer of the whole account lists and creates endpoints but reads no events.
func TestConfinedPrincipal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rc := newReceiver(t, nil)
	mine := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": rc.URL + "/mine", "policy": map[string]any{"allowHttp": true}})["id"].(string)
	other := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": rc.URL + "/other", "policy": map[string]any{"allowHttp": true}})["id"].(string)
	pub := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "a.b", "data": map[string]any{}})
	portal := addToken(t, outboxapi.Principal{Account: "acct_a", Actor: "portal:pl_1", Consumer: true, Endpoints: []string{mine}})

	list := e.must(http.StatusOK, "GET", "/api/v1/webhooks", portal, nil)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != mine {
		t.Fatalf("the confined listing: %v", list)
	}
	e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+mine, portal, nil)
	e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+mine+"/deliveries", portal, nil)
	e.must(http.StatusOK, "PATCH", "/api/v1/webhooks/"+mine, portal, map[string]any{"apiVersion": "v2"})
	e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+mine+"/pause", portal, nil)
	for _, path := range []string{"/api/v1/webhooks/" + other, "/api/v1/webhooks/" + other + "/deliveries", "/api/v1/webhooks/" + other + "/stats"} {
		e.must(http.StatusNotFound, "GET", path, portal, nil)
	}
	e.must(http.StatusNotFound, "DELETE", "/api/v1/webhooks/"+other, portal, nil)
	e.must(http.StatusNotFound, "POST", "/api/v1/webhooks/"+other+"/rotate-secret", portal, nil)
	e.must(http.StatusForbidden, "POST", "/api/v1/webhooks", portal, map[string]any{"url": rc.URL + "/new"})
	e.must(http.StatusForbidden, "POST", "/api/v1/events", portal, map[string]any{"type": "a.b", "data": map[string]any{}})
	e.must(http.StatusForbidden, "GET", "/api/v1/events", portal, nil)
	e.must(http.StatusForbidden, "GET", "/api/v1/events/"+pub["event"].(map[string]any)["id"].(string), portal, nil)
	e.must(http.StatusForbidden, "GET", "/api/v1/audit", portal, nil)
	if got := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+other, "token-a", nil); got["status"] != "ACTIVE" {
		t.Fatalf("the other endpoint changed: %v", got)
	}

	whole := addToken(t, outboxapi.Principal{Account: "acct_a", Actor: "portal:pl_2", Consumer: true})
	if n := len(e.must(http.StatusOK, "GET", "/api/v1/webhooks", whole, nil)["data"].([]any)); n != 2 {
		t.Fatalf("an account-wide consumer lists %d endpoints, want 2", n)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/webhooks", whole, map[string]any{"url": rc.URL + "/new", "policy": map[string]any{"allowHttp": true}})
	e.must(http.StatusForbidden, "GET", "/api/v1/audit", whole, nil)
}
