package outboxapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// routes are every route of docs/outbox.md §4.
var routes = []string{
	"POST /api/v1/events", "GET /api/v1/events/{id}", "GET /api/v1/events",
	"POST /api/v1/webhooks", "GET /api/v1/webhooks", "GET /api/v1/webhooks/{id}", "PATCH /api/v1/webhooks/{id}",
	"DELETE /api/v1/webhooks/{id}", "POST /api/v1/webhooks/{id}/ping", "POST /api/v1/webhooks/{id}/pause",
	"POST /api/v1/webhooks/{id}/resume", "POST /api/v1/webhooks/{id}/rotate-secret",
	"GET /api/v1/webhooks/{id}/deliveries", "GET /api/v1/webhooks/{id}/deliveries/{deliveryId}",
	"POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry", "POST /api/v1/webhooks/{id}/recover", "GET /api/v1/audit",
	"GET /api/v1/webhooks/{id}/stats",
	"POST /api/v1/event-types", "GET /api/v1/event-types", "GET /api/v1/event-types/{name}", "PATCH /api/v1/event-types/{name}",
	"DELETE /api/v1/event-types/{name}", "GET /api/v1/event-catalog", "PUT /api/v1/event-catalog",
}

// TestEveryRouteInOpenAPI: the standalone handler's /openapi.json, and the document
// of a huma API the routes are registered on, list every route with the bearer
// security scheme.
func TestEveryRouteInOpenAPI(t *testing.T) {
	e := newEnv(t)
	code, doc := e.call("GET", "/openapi.json", "", nil)
	if code != http.StatusOK {
		t.Fatalf("openapi.json: %d", code)
	}
	paths := doc["paths"].(map[string]any)
	var got []string
	for p, ops := range paths {
		for m := range ops.(map[string]any) {
			got = append(got, strings.ToUpper(m)+" "+p)
		}
	}
	want := slices.Clone(routes)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("OpenAPI paths\n%v\nwant\n%v", got, want)
	}
	schemes := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	if s, ok := schemes["bearerAuth"].(map[string]any); !ok || s["scheme"] != "bearer" {
		t.Fatalf("security schemes %v", schemes)
	}

	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("embedding", "1"))
	if err := outboxapi.Register(api, outboxapi.Config{Outbox: e.ob, Authenticate: authenticate}); err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		item := api.OpenAPI().Paths[path]
		if item == nil || map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PATCH": item.Patch, "PUT": item.Put, "DELETE": item.Delete}[method] == nil {
			t.Errorf("%s missing from the embedding API's document", r)
		}
	}
	if err := outboxapi.Register(api, outboxapi.Config{}); err == nil {
		t.Error("a Config without Outbox and Authenticate registered")
	}
}

// TestAuthentication: no token or an unknown one is a 401 problem with a
// WWW-Authenticate challenge, before anything else is looked at.
func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	for _, token := range []string{"", "nope"} {
		code, raw := e.raw("POST", "/api/v1/webhooks", token, `{"bad json`)
		if code != http.StatusUnauthorized || !strings.Contains(string(raw), `"status":401`) {
			t.Fatalf("token %q: %d %s", token, code, raw)
		}
	}
}

// TestEndpointLifecycle: create (the secret shown once), read, list, change, ping
// (whatever the filter), pause, resume, rotate the secret (both signatures sent and
// verifying), remove; every field of the wire model as docs/outbox.md §4 names it.
func TestEndpointLifecycle(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	created := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/hook", "events": []string{"invoice.paid"}, "apiVersion": "2026-01-01",
		"policy": map[string]any{"scheduleSeconds": []float64{1, 1}, "allowHttp": true},
	})
	id, secret := created["id"].(string), created["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	wantKeys := []string{"apiVersion", "channels", "disabledAt", "events", "failures", "filter", "headers", "holdUntil", "id",
		"lastDeliveryAt", "pauseReason", "pausedAt", "policy", "profile", "rateLimit", "status", "url"}
	got := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id, "token-a", nil)
	if keys := sortedKeys(got); !slices.Equal(keys, wantKeys) {
		t.Fatalf("endpoint keys %v, want %v", keys, wantKeys)
	}
	if keys := sortedKeys(created); !slices.Equal(keys, sortedStrings(append(slices.Clone(wantKeys), "secret"))) {
		t.Fatalf("created keys %v", keys)
	}
	if got["status"] != "ACTIVE" || got["profile"] != "standard" || got["failures"] != 0.0 || got["pausedAt"] != nil ||
		!reflect.DeepEqual(got["policy"], map[string]any{"scheduleSeconds": []any{1.0, 1.0}, "allowHttp": true}) {
		t.Fatalf("endpoint %v", got)
	}
	list := e.must(http.StatusOK, "GET", "/api/v1/webhooks", "token-a", nil)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != id || list["nextCursor"] != nil {
		t.Fatalf("list %v", list)
	}
	patched := e.must(http.StatusOK, "PATCH", "/api/v1/webhooks/"+id, "token-a", map[string]any{"apiVersion": "2026-02-02"})
	if patched["apiVersion"] != "2026-02-02" || patched["url"] != rc.URL+"/hook" {
		t.Fatalf("patched %v", patched)
	}

	ping := e.must(http.StatusAccepted, "POST", "/api/v1/webhooks/"+id+"/ping", "token-a", nil)
	if ping["type"] != "settings.webhook.ping" || ping["endpointId"] != id {
		t.Fatalf("ping %v", ping)
	}
	pid := ping["id"].(string)
	e.waitFor("the ping", func() bool { return e.delivery("token-a", id, pid)["status"] == "SUCCEEDED" })
	if rc.count() != 1 || rc.got[0].Header.Get("webhook-id") != ping["eventId"] {
		t.Fatalf("receiver got %d requests", rc.count())
	}
	if err := verify(secret, rc.got[0].Header, rc.bodies[0]); err != nil {
		t.Fatalf("ping signature: %v", err)
	}

	paused := e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+id+"/pause?reason=maintenance", "token-a", nil)
	if paused["status"] != "PAUSED" || paused["pauseReason"] != "MANUAL" || paused["pausedAt"] == nil {
		t.Fatalf("paused %v", paused)
	}
	if r := e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+id+"/resume", "token-a", nil); r["status"] != "ACTIVE" || r["pauseReason"] != nil {
		t.Fatalf("resumed %v", r)
	}
	rotated := e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+id+"/rotate-secret", "token-a", nil)
	newSecret := rotated["secret"].(string)
	if newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotated %v", rotated)
	}
	ping = e.must(http.StatusAccepted, "POST", "/api/v1/webhooks/"+id+"/ping", "token-a", nil)
	pid = ping["id"].(string)
	e.waitFor("the second ping", func() bool { return e.delivery("token-a", id, pid)["status"] == "SUCCEEDED" })
	h, body := rc.got[1].Header, rc.bodies[1]
	if n := len(strings.Fields(h.Get("webhook-signature"))); n != 2 {
		t.Fatalf("%d signatures after a rotation, want 2", n)
	}
	for _, s := range []string{secret, newSecret} {
		if err := verify(s, h, body); err != nil {
			t.Fatalf("signature under %s…: %v", s[:10], err)
		}
	}

	e.must(http.StatusNoContent, "DELETE", "/api/v1/webhooks/"+id+"?reason=done", "token-a", nil)
	e.must(http.StatusNotFound, "GET", "/api/v1/webhooks/"+id, "token-a", nil)
	// The removed endpoint's log stays readable.
	if ds := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id+"/deliveries", "token-a", nil)["data"].([]any); len(ds) != 2 {
		t.Fatalf("log after removal: %v", ds)
	}
	audit := e.must(http.StatusOK, "GET", "/api/v1/audit", "token-a", nil)["data"].([]any)
	var actions []string
	for _, a := range audit {
		m := a.(map[string]any)
		actions = append(actions, fmt.Sprintf("%s by %s (%v)", m["action"], m["actor"], m["reason"]))
	}
	want := []string{"endpoint.removed by tok_a (done)", "endpoint.secret_rotated by tok_a (<nil>)", "endpoint.resumed by tok_a (<nil>)",
		"endpoint.paused by tok_a (maintenance)", "endpoint.created by tok_a (<nil>)"}
	if !slices.Equal(actions, want) {
		t.Fatalf("audit\n%v\nwant\n%v", actions, want)
	}
}

func verify(secret string, h http.Header, body []byte) error {
	v, err := webhooksig.NewVerifier(secret)
	if err != nil {
		return err
	}
	return v.Verify(h, body)
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return sortedStrings(ks)
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}

// TestDeliveryLogRetryAndRecover: a receiver that fails twice then succeeds shows
// three attempts with their statuses, durations and stored bodies; a FAILED delivery
// is sent again by retry (audited with the token's id), and by recover.
func TestDeliveryLogRetryAndRecover(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	failing := true
	rc := newReceiver(t, func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing && n < 2 {
			return 500
		}
		return 200
	})
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/", "policy": map[string]any{"scheduleSeconds": []float64{0, 0}, "allowHttp": true}})
	id := ep["id"].(string)
	pub := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"id": "inv-1", "type": "invoice.paid", "data": map[string]any{"n": 1}})
	if pub["duplicate"] != false || pub["event"].(map[string]any)["id"] != "inv-1" {
		t.Fatalf("publish %v", pub)
	}
	did := pub["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	var d map[string]any
	e.waitFor("three attempts", func() bool { d = e.delivery("token-a", id, did); return d["status"] == "SUCCEEDED" })
	attempts := d["attempts"].([]any)
	if len(attempts) != 3 {
		t.Fatalf("attempts %v", attempts)
	}
	for i, a := range attempts {
		m := a.(map[string]any)
		wantStatus := 500.0
		if i == 2 {
			wantStatus = 200
		}
		if m["number"] != float64(i+1) || m["status"] != wantStatus || m["responseBody"] != fmt.Sprintf(`{"n":%d}`, i) ||
			m["durationMs"].(float64) <= 0 || m["at"] == nil {
			t.Fatalf("attempt %d: %v", i+1, m)
		}
	}
	if keys := sortedKeys(attempts[0].(map[string]any)); !slices.Equal(keys, []string{"at", "durationMs", "error", "number", "outcome", "responseBody", "status"}) {
		t.Fatalf("attempt keys %v", keys)
	}
	if dup := e.must(http.StatusOK, "POST", "/api/v1/events", "token-a", map[string]any{"id": "inv-1", "type": "invoice.paid", "data": map[string]any{"n": 1}}); dup["duplicate"] != true {
		t.Fatalf("republish %v", dup)
	}

	// A delivery that runs out of attempts is FAILED; retry sends it again.
	mu.Lock()
	rc.answer = func(int) int { return 503 }
	mu.Unlock()
	did = e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "invoice.paid", "data": 2})["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	e.waitFor("FAILED", func() bool { return e.delivery("token-a", id, did)["status"] == "FAILED" })
	mu.Lock()
	rc.answer = func(int) int { return 204 }
	mu.Unlock()
	r := e.must(http.StatusAccepted, "POST", "/api/v1/webhooks/"+id+"/deliveries/"+did+"/retry?reason=fixed", "token-a", nil)
	if r["status"] != "PENDING" {
		t.Fatalf("retry %v", r)
	}
	e.waitFor("the retry", func() bool { return e.delivery("token-a", id, did)["status"] == "SUCCEEDED" })
	if code, _ := e.call("POST", "/api/v1/webhooks/"+id+"/deliveries/"+did+"/retry", "token-a", nil); code != http.StatusAccepted {
		t.Fatalf("retry of a SUCCEEDED delivery: %d", code)
	}
	e.waitFor("the second retry", func() bool { return e.delivery("token-a", id, did)["status"] == "SUCCEEDED" })

	rec := e.must(http.StatusAccepted, "POST", "/api/v1/webhooks/"+id+"/recover?since=2000-01-01T00:00:00Z", "token-a", nil)
	if rec["recovered"] != 0.0 {
		t.Fatalf("recover %v", rec)
	}
	audit := e.must(http.StatusOK, "GET", "/api/v1/audit?endpointId="+id, "token-a", nil)["data"].([]any)
	first := audit[0].(map[string]any)
	if first["action"] != "endpoint.recovered" || first["count"] != 0.0 || first["actor"] != "tok_a" {
		t.Fatalf("audit %v", audit[0])
	}
	retried := audit[2].(map[string]any)
	if retried["action"] != "delivery.retried" || retried["deliveryId"] != did || retried["actor"] != "tok_a" || retried["reason"] != "fixed" {
		t.Fatalf("audit %v", audit[2])
	}
}
