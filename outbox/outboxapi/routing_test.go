package outboxapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// hasLoc reports whether a problem's locations and messages name want.
func hasLoc(locs []string, want string) bool {
	return slices.ContainsFunc(locs, func(l string) bool { return strings.Contains(l, want) })
}

// TestEndpointHeaders: headers given at creation are sent on every attempt, shown
// masked when they look like credentials; PATCH sets and removes them one by one; a
// reserved or malformed header is a 422 naming it, and changes nothing.
func TestEndpointHeaders(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/h", "policy": map[string]any{"allowHttp": true},
		"headers": map[string]any{"authorization": "Bearer sk_live_0123456789abcdef", "X-Tenant": "acme", "X-Api-Key": "k1"},
	})
	id := ep["id"].(string)
	want := map[string]any{"Authorization": "Bearer ****cdef", "X-Tenant": "acme", "X-Api-Key": "****"}
	if fmt.Sprint(ep["headers"]) != fmt.Sprint(want) {
		t.Fatalf("headers shown %v, want %v", ep["headers"], want)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "a.b", "data": map[string]any{}})
	e.waitFor("the attempt", func() bool { return rc.count() == 1 })
	got := rc.got[0].Header
	if got.Get("Authorization") != "Bearer sk_live_0123456789abcdef" || got.Get("X-Tenant") != "acme" || got.Get("X-Api-Key") != "k1" ||
		got.Get("Webhook-Signature") == "" || got.Get("Content-Type") != "application/json" {
		t.Fatalf("attempt headers %v", got)
	}

	for _, bad := range []struct {
		headers map[string]any
		loc     string
	}{
		{map[string]any{"Host": "evil.example"}, "body.headers.Host"},
		{map[string]any{"webhook-signature": "v1,x"}, "body.headers.webhook-signature"},
		{map[string]any{"Content-Length": "1"}, "body.headers.Content-Length"},
		{map[string]any{"Transfer-Encoding": "chunked"}, "body.headers.Transfer-Encoding"},
		{map[string]any{"Connection": "close"}, "body.headers.Connection"},
		{map[string]any{"X-Bad Name": "v"}, "body.headers.X-Bad Name"},
		{map[string]any{"X-Split": "a\r\nInjected: 1"}, "body.headers.X-Split"},
	} {
		code, _, locs := e.problem("POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/x", "headers": bad.headers})
		if code != http.StatusUnprocessableEntity || !hasLoc(locs, bad.loc) {
			t.Errorf("create with %v: %d %v, want 422 at %s", bad.headers, code, locs, bad.loc)
		}
		code, _, locs = e.problem("PATCH", "/api/v1/webhooks/"+id, "token-a", map[string]any{"headers": bad.headers})
		if code != http.StatusUnprocessableEntity || !hasLoc(locs, bad.loc) {
			t.Errorf("update with %v: %d %v, want 422 at %s", bad.headers, code, locs, bad.loc)
		}
	}
	if list := e.must(http.StatusOK, "GET", "/api/v1/webhooks", "token-a", nil); len(list["data"].([]any)) != 1 {
		t.Fatalf("a refused endpoint was created: %v", list)
	}

	up := e.must(http.StatusOK, "PATCH", "/api/v1/webhooks/"+id, "token-a", map[string]any{
		"headers": map[string]any{"X-Tenant": "globex", "X-Api-Key": nil, "X-New": "1"}})
	if fmt.Sprint(up["headers"]) != fmt.Sprint(map[string]any{"Authorization": "Bearer ****cdef", "X-Tenant": "globex", "X-New": "1"}) {
		t.Fatalf("after PATCH: %v", up["headers"])
	}
}

// TestCallerSecrets: an endpoint created with a whsec_ secret signs with it; with a
// whsk_ signing key it signs v1a and the answer gives the whpk_ public key, which
// verifies the attempt; a rotation to a key of the caller's keeps the old one
// signing beside it; a malformed key is a 422 at body.secret and creates nothing.
func TestCallerSecrets(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	secret := webhooksig.NewSecret()
	a := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/v1", "secret": secret, "events": []string{"v1.test"}, "policy": map[string]any{"allowHttp": true}})
	if a["secret"] != secret {
		t.Fatalf("answered secret %v, want the one given", a["secret"])
	}
	signing, public := webhooksig.NewKeyPair()
	b := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": rc.URL + "/v1a", "secret": signing, "events": []string{"v1a.test"}, "policy": map[string]any{"allowHttp": true}})
	if b["secret"] != public {
		t.Fatalf("answered %v, want the whpk_ public key %s", b["secret"], public)
	}
	for _, bad := range []string{"whsec_short", "whsk_!!!", public, "secret"} {
		code, _, locs := e.problem("POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/x", "secret": bad})
		if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.secret") {
			t.Errorf("secret %q: %d %v, want 422 at body.secret", bad, code, locs)
		}
	}
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "v1.test", "data": map[string]any{"n": 1}})
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "v1a.test", "data": map[string]any{"n": 2}})
	e.waitFor("two attempts", func() bool { return rc.count() == 2 })
	verify := func(r *http.Request, body []byte, key string) error {
		v, err := webhooksig.NewVerifier(key)
		if err != nil {
			return err
		}
		return v.Verify(r.Header, body)
	}
	for i, r := range rc.got {
		key := secret
		if r.URL.Path == "/v1a" {
			key = public
			if !strings.HasPrefix(r.Header.Get("webhook-signature"), "v1a,") {
				t.Fatalf("the ed25519 endpoint signed %q", r.Header.Get("webhook-signature"))
			}
		}
		if err := verify(r, rc.bodies[i], key); err != nil {
			t.Fatalf("%s does not verify: %v", r.URL.Path, err)
		}
	}
	next := webhooksig.NewSecret()
	code, _, locs := e.problem("POST", "/api/v1/webhooks/"+a["id"].(string)+"/rotate-secret", "token-a", map[string]any{"secret": "whsec_x"})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.secret") {
		t.Fatalf("rotate to a malformed key: %d %v", code, locs)
	}
	rot := e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+a["id"].(string)+"/rotate-secret", "token-a", map[string]any{"secret": next})
	if rot["secret"] != next {
		t.Fatalf("rotation answered %v, want the key given", rot["secret"])
	}
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "v1.test", "data": map[string]any{"n": 3}})
	e.waitFor("the third attempt", func() bool { return rc.count() == 3 })
	for _, key := range []string{secret, next} {
		if err := verify(rc.got[2], rc.bodies[2], key); err != nil {
			t.Fatalf("after the rotation, %s... does not verify: %v", key[:10], err)
		}
	}
}

// TestIdempotencyKey: the same Idempotency-Key with the same body answers the first
// publish's event (200, duplicate) and sends nothing more; with another body it is
// a 409 naming the key; another account's key is its own; a bad key is a 422 at
// header.Idempotency-Key.
func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": rc.URL, "policy": map[string]any{"allowHttp": true}})
	publish := func(token, key string, body map[string]any) (int, map[string]any) {
		req, err := testkit.JSONRequest("POST", e.base+"/api/v1/events", token, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", key)
		return doJSON(t, req)
	}
	body := map[string]any{"type": "order.created", "data": map[string]any{"order": 7}}
	code, first := publish("token-a", "order-7", body)
	if code != http.StatusCreated {
		t.Fatalf("first: %d %v", code, first)
	}
	code, again := publish("token-a", "order-7", map[string]any{"data": map[string]any{"order": 7}, "type": "order.created"})
	if code != http.StatusOK || again["duplicate"] != true || again["event"].(map[string]any)["id"] != first["event"].(map[string]any)["id"] {
		t.Fatalf("replay: %d %v", code, again)
	}
	code, conflict := publish("token-a", "order-7", map[string]any{"type": "order.created", "data": map[string]any{"order": 8}})
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(conflict["detail"]), `"order-7"`) {
		t.Fatalf("another body: %d %v", code, conflict)
	}
	if code, other := publish("token-b", "order-7", body); code != http.StatusCreated {
		t.Fatalf("the key in another account: %d %v", code, other)
	}
	code, bad := publish("token-a", strings.Repeat("k", 256), body)
	if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(bad), "Idempotency-Key") {
		t.Fatalf("a key too long: %d %v", code, bad)
	}
	e.waitFor("the one attempt", func() bool { return rc.count() == 1 })
	if evs := e.must(http.StatusOK, "GET", "/api/v1/events", "token-a", nil); len(evs["data"].([]any)) != 1 {
		t.Fatalf("events stored %v, want one", evs["data"])
	}
}

func doJSON(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, raw, err := testkit.Exchange(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%d %q: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, out
}

// TestChannelsAndFilters: an event with channels reaches only the endpoints sharing
// one, an event without channels only those without; a filter decides per event,
// and an endpoint it excluded is named in the event's view, with no delivery; a bad
// filter is a 422 at the place of its error.
func TestChannelsAndFilters(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	mk := func(path string, extra map[string]any) string {
		body := map[string]any{"url": rc.URL + path, "policy": map[string]any{"allowHttp": true}}
		for k, v := range extra {
			body[k] = v
		}
		return e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", body)["id"].(string)
	}
	eu := mk("/eu", map[string]any{"channels": []string{"eu", "global"}})
	us := mk("/us", map[string]any{"channels": []string{"us"}})
	all := mk("/none", nil)
	big := mk("/big", map[string]any{"filter": map[string]any{"$or": []any{
		map[string]any{"amount": map[string]any{"$gte": 100}}, map[string]any{"customer.tier": "gold"}}}})

	targets := func(pub map[string]any) []string {
		var out []string
		for _, d := range pub["deliveries"].([]any) {
			out = append(out, d.(map[string]any)["endpointId"].(string))
		}
		slices.Sort(out)
		return out
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	pub := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "x", "channels": []string{"eu"}, "data": map[string]any{"amount": 5}})
	if got := targets(pub); !slices.Equal(got, []string{eu}) {
		t.Fatalf("channel eu reached %v, want %s", got, eu)
	}
	pub = e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "x", "data": map[string]any{"amount": 500}})
	if got := targets(pub); !slices.Equal(got, sorted(all, big)) {
		t.Fatalf("no channel, amount 500 reached %v, want %s %s", got, all, big)
	}
	pub = e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "x", "data": map[string]any{"amount": 5, "customer": map[string]any{"tier": "basic"}}})
	if got := targets(pub); !slices.Equal(got, []string{all}) {
		t.Fatalf("amount 5 reached %v, want %s", got, all)
	}
	view := e.must(http.StatusOK, "GET", "/api/v1/events/"+pub["event"].(map[string]any)["id"].(string), "token-a", nil)
	if fmt.Sprint(view["excluded"]) != fmt.Sprint([]any{map[string]any{"endpointId": big, "reason": "filter"}}) || len(view["deliveries"].([]any)) != 1 {
		t.Fatalf("the event's view: excluded %v deliveries %v", view["excluded"], view["deliveries"])
	}
	_ = us
	e.waitFor("the deliveries", func() bool { return rc.count() == 4 })

	for _, bad := range []struct {
		filter any
		loc    string
	}{
		{map[string]any{"$and": []any{map[string]any{"amount": map[string]any{"$gt": "100"}}}}, "body.filter.$and[0].amount.$gt"},
		{map[string]any{"amount": map[string]any{"$regex": "1"}}, "body.filter.amount.$regex"},
		{[]any{1}, "body.filter"},
	} {
		code, _, locs := e.problem("POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/x", "filter": bad.filter})
		if code != http.StatusUnprocessableEntity || !hasLoc(locs, bad.loc) {
			t.Errorf("filter %v: %d %v, want 422 at %s", bad.filter, code, locs, bad.loc)
		}
	}
	code, _, locs := e.problem("POST", "/api/v1/events", "token-a", map[string]any{"type": "x", "channels": []string{"a b"}, "data": 1})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.channels") {
		t.Fatalf("a bad channel: %d %v", code, locs)
	}
}

// TestEventTypeCatalog: event types are created with a JSON Schema, listed, changed
// and archived; a schema that does not compile is a 422 at its place; a publish whose
// data fails its type's schema is a 422 at the data's first error and stores
// nothing; a strict catalog lets endpoints subscribe only to its types.
func TestEventTypeCatalog(t *testing.T) {
	e := newEnv(t)
	schema := map[string]any{"type": "object", "required": []string{"amount"}, "properties": map[string]any{
		"amount": map[string]any{"type": "number", "minimum": 0},
		"lines":  map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"sku": map[string]any{"type": "string"}}}},
	}}
	et := e.must(http.StatusCreated, "POST", "/api/v1/event-types", "token-a", map[string]any{"name": "invoice.paid", "description": "An invoice was paid", "schema": schema})
	if et["name"] != "invoice.paid" || et["archived"] != false || et["schema"] == nil {
		t.Fatalf("created %v", et)
	}
	e.must(http.StatusConflict, "POST", "/api/v1/event-types", "token-a", map[string]any{"name": "invoice.paid"})
	code, _, locs := e.problem("POST", "/api/v1/event-types", "token-a", map[string]any{"name": "bad", "schema": map[string]any{"properties": map[string]any{"a": map[string]any{"type": "numbr"}}}})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.schema.properties.a.type") {
		t.Fatalf("a bad schema: %d %v", code, locs)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/event-types", "token-a", map[string]any{"name": "invoice.voided"})

	code, _, locs = e.problem("POST", "/api/v1/events", "token-a", map[string]any{"type": "invoice.paid", "data": map[string]any{"amount": 1, "lines": []any{map[string]any{"sku": "a"}, map[string]any{"sku": 2}}}})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.data.lines[1].sku") {
		t.Fatalf("data failing the schema: %d %v", code, locs)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "invoice.paid", "data": map[string]any{"amount": 1}})
	if evs := e.must(http.StatusOK, "GET", "/api/v1/events", "token-a", nil); len(evs["data"].([]any)) != 1 {
		t.Fatalf("a refused publish was stored: %v", evs)
	}
	// Another account's catalog is its own.
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-b", map[string]any{"type": "invoice.paid", "data": "anything"})

	e.must(http.StatusOK, "PATCH", "/api/v1/event-types/invoice.paid", "token-a", map[string]any{"schema": nil})
	e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "invoice.paid", "data": "no schema now"})

	e.must(http.StatusOK, "PUT", "/api/v1/event-catalog", "token-a", map[string]any{"strict": true})
	if c := e.must(http.StatusOK, "GET", "/api/v1/event-catalog", "token-a", nil); c["strict"] != true {
		t.Fatalf("catalog %v", c)
	}
	arch := e.must(http.StatusOK, "DELETE", "/api/v1/event-types/invoice.voided", "token-a", nil)
	if arch["archived"] != true {
		t.Fatalf("archived %v", arch)
	}
	code, _, locs = e.problem("POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"invoice.paid", "invoice.voided"}})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.events[1]") {
		t.Fatalf("subscribing to an archived type of a strict catalog: %d %v", code, locs)
	}
	e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"invoice.paid"}})
	e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/y"})
	list := e.must(http.StatusOK, "GET", "/api/v1/event-types", "token-a", nil)
	if len(list["data"].([]any)) != 1 {
		t.Fatalf("listed %v, want the one not archived", list["data"])
	}
	list = e.must(http.StatusOK, "GET", "/api/v1/event-types?includeArchived=true&limit=1", "token-a", nil)
	if len(list["data"].([]any)) != 1 || list["nextCursor"] == nil {
		t.Fatalf("a page of one: %v", list)
	}
	e.must(http.StatusOK, "PATCH", "/api/v1/event-types/invoice.voided", "token-a", map[string]any{"archived": false})
	e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": "https://hooks.example.com/z", "events": []string{"invoice.voided"}})
	e.must(http.StatusNotFound, "GET", "/api/v1/event-types/invoice.paid", "token-b", nil)
}

// TestRateLimit: an endpoint limited to 4 deliveries per second gets every one of 12
// events, none of them refused or given up, and no sooner than its bucket allows: the
// k-th attempt (from 1) comes at least (k-4)/4 s after the events were published.
func TestRateLimit(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": rc.URL, "rateLimit": 4,
		"policy": map[string]any{"allowHttp": true}})
	if ep["rateLimit"] != 4.0 {
		t.Fatalf("rateLimit shown %v", ep["rateLimit"])
	}
	start := time.Now()
	for i := range 12 {
		e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "tick", "data": map[string]any{"i": i}})
	}
	e.waitFor("12 deliveries", func() bool { return rc.count() == 12 })
	rc.mu.Lock()
	arrived := slices.Clone(rc.at)
	rc.mu.Unlock()
	for k := 5; k <= 12; k++ {
		if min := time.Duration(k-4) * time.Second / 4; arrived[k-1].Sub(start) < min {
			t.Fatalf("attempt %d came %s after the publishes, before the limit allows (%s)", k, arrived[k-1].Sub(start), min)
		}
	}
	code, _, locs := e.problem("PATCH", "/api/v1/webhooks/"+ep["id"].(string), "token-a", map[string]any{"rateLimit": 10001})
	if code != http.StatusUnprocessableEntity || !hasLoc(locs, "body.rateLimit") {
		t.Fatalf("rateLimit out of range: %d %v", code, locs)
	}
}
