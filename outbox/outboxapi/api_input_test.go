package outboxapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// problem returns the status, detail, and the locations and messages of the
// errors a problem document lists.
func (e *env) problem(method, path, token string, body any) (int, string, []string) {
	e.t.Helper()
	code, out := e.call(method, path, token, body)
	var locs []string
	if errs, ok := out["errors"].([]any); ok {
		for _, d := range errs {
			m := d.(map[string]any)
			if loc, ok := m["location"].(string); ok {
				locs = append(locs, loc)
			}
			if msg, ok := m["message"].(string); ok {
				locs = append(locs, msg)
			}
		}
	}
	detail, _ := out["detail"].(string)
	if out["status"] != float64(code) || out["title"] == nil {
		e.t.Fatalf("%s %s: %d %v is not a problem document", method, path, code, out)
	}
	return code, detail, locs
}

// TestBadInputNamesTheFieldAndCreatesNothing: malformed JSON, unknown fields, a bad
// or refused URL, an unknown profile or policy key, a value out of range: each is a
// 4xx problem document naming what was wrong, and nothing is created.
func TestBadInputNamesTheFieldAndCreatesNothing(t *testing.T) {
	e := newEnv(t)
	ok := map[string]any{"url": "https://hooks.example.com/x"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{"url": "https://hooks.example.com/x"}
		m[k] = v
		return m
	}
	rows := []struct {
		name string
		body any
		code int
		loc  string // a location the problem names, or text its detail holds
	}{
		{"malformed JSON", `{"url": "https://hooks.example.com/x"`, 400, "unexpected end"},
		{"not an object", `[1]`, 422, "body"},
		{"unknown field", with("secretKey", "x"), 422, "body.secretKey"},
		{"unknown policy key", with("policy", map[string]any{"retries": 3}), 422, "body.policy.retries"},
		{"policy value of the wrong type", with("policy", map[string]any{"maxAttempts": "3"}), 422, "body.policy.maxAttempts"},
		{"policy value out of range", with("policy", map[string]any{"maxAttempts": 0}), 422, "body.policy.maxAttempts"},
		{"exclusive policy keys", with("policy", map[string]any{"scheduleSeconds": []int{1}, "exponential": map[string]any{"firstSeconds": 1, "factor": 2, "capSeconds": 9}}), 422, "body.policy"},
		{"unknown profile", with("profile", "fastest"), 422, "body.profile"},
		{"no url", map[string]any{"events": []string{"x"}}, 422, "property url"},
		{"relative url", map[string]any{"url": "/hook"}, 422, "body.url"},
		{"ftp url", map[string]any{"url": "ftp://hooks.example.com/x"}, 422, "body.url"},
		{"http without allowHttp", map[string]any{"url": "http://hooks.example.com/x"}, 422, "body.url"},
		{"refused IP literal", map[string]any{"url": "https://169.254.169.254/latest"}, 422, "body.url"},
		{"refused numeric host", map[string]any{"url": "https://0x7f000001/"}, 422, "body.url"},
		{"user-info", map[string]any{"url": "https://user:pw@hooks.example.com/"}, 422, "body.url"},
		{"denied host", map[string]any{"url": "https://blocked.example/x"}, 422, "body.url"},
		{"port out of range", map[string]any{"url": "https://hooks.example.com:70000/"}, 422, "body.url"},
		{"bad event type", with("events", []string{"has space"}), 422, "body.events"},
		{"too many event types", with("events", make([]string, 101)), 422, "body.events"},
	}
	for _, r := range rows {
		code, detail, locs := e.problem("POST", "/api/v1/webhooks", "token-a", r.body)
		if code != r.code || !strings.Contains(strings.Join(locs, " ")+" "+detail, r.loc) {
			t.Errorf("%s: %d %q %v, want %d naming %s", r.name, code, detail, locs, r.code, r.loc)
		}
	}
	if list := e.must(http.StatusOK, "GET", "/api/v1/webhooks", "token-a", nil)["data"].([]any); len(list) != 0 {
		t.Fatalf("bad input created %v", list)
	}
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", ok)
	id := ep["id"].(string)
	for _, r := range []struct {
		name string
		body any
		loc  string
	}{
		{"unknown field", map[string]any{"uri": "https://x.example/"}, "body.uri"},
		{"refused url", map[string]any{"url": "https://10.0.0.1/"}, "body.url"},
		{"unknown policy key", map[string]any{"policy": map[string]any{"timeout": 1}}, "body.policy.timeout"},
		{"policy out of range", map[string]any{"policy": map[string]any{"jitter": 0.9}}, "body.policy.jitter"},
		{"unknown profile", map[string]any{"profile": "x"}, "body.profile"},
	} {
		if code, detail, locs := e.problem("PATCH", "/api/v1/webhooks/"+id, "token-a", r.body); code != 422 || !strings.Contains(strings.Join(locs, " ")+detail, r.loc) {
			t.Errorf("PATCH %s: %d %q %v", r.name, code, detail, locs)
		}
	}
	if got := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id, "token-a", nil); got["url"] != ok["url"] || len(got["policy"].(map[string]any)) != 0 {
		t.Fatalf("a refused PATCH changed %v", got)
	}
	for _, r := range []struct {
		name string
		body any
		loc  string
	}{
		{"malformed", `{"type":`, "unexpected end"},
		{"no type", map[string]any{"data": 1}, "property type"},
		{"no data", map[string]any{"type": "x"}, "property data"},
		{"bad id", map[string]any{"type": "x", "data": 1, "id": "has space"}, "body.id"},
		{"unknown field", map[string]any{"type": "x", "data": 1, "account": "acct_b"}, "body.account"},
		{"type with a space", map[string]any{"type": "a b", "data": 1}, "body.type"},
		{"another account's endpoint", map[string]any{"type": "x", "data": 1, "endpointId": "ep_nope"}, "not found"},
	} {
		code, detail, locs := e.problem("POST", "/api/v1/events", "token-a", r.body)
		if code < 400 || code > 499 || !strings.Contains(strings.Join(locs, " ")+detail, r.loc) {
			t.Errorf("publish %s: %d %q %v", r.name, code, detail, locs)
		}
	}
	if evs := e.must(http.StatusOK, "GET", "/api/v1/events", "token-a", nil)["data"].([]any); len(evs) != 0 {
		t.Fatalf("bad publishes stored %v", evs)
	}
	for _, q := range []string{"status=LOST", "limit=0", "limit=501", "cursor=bogus", "since=yesterday", "color=red"} {
		if code, _, _ := e.problem("GET", "/api/v1/webhooks/"+id+"/deliveries?"+q, "token-a", nil); code < 400 || code > 499 {
			t.Errorf("deliveries?%s: %d", q, code)
		}
	}
	if code, _, locs := e.problem("GET", "/api/v1/events?cursor="+cursorOf(t, e, id), "token-a", nil); code != 400 || len(locs) == 0 || locs[0] != "query.cursor" {
		t.Errorf("a deliveries cursor on events: %d %v", code, locs)
	}
}

// cursorOf returns a deliveries cursor of endpoint id (after publishing to it).
func cursorOf(t *testing.T, e *env, id string) string {
	for i := range 2 {
		e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"type": "x", "data": i})
	}
	page := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=1", "token-a", nil)
	c, ok := page["nextCursor"].(string)
	if !ok {
		t.Fatalf("no cursor in %v", page)
	}
	return c
}

// TestAccountIsolation: account B cannot list, read, change, remove, ping, pause,
// resume, rotate, retry, recover or publish into account A's objects: each answers
// 404, as for an object that does not exist, and A's objects are unchanged.
func TestAccountIsolation(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{"url": rc.URL + "/", "policy": map[string]any{"allowHttp": true}})
	id := ep["id"].(string)
	pub := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"id": "evt-a", "type": "x", "data": 1})
	did := pub["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	e.waitFor("the delivery", func() bool { return e.delivery("token-a", id, did)["status"] == "SUCCEEDED" })
	before := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id, "token-a", nil)

	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/webhooks/" + id}, {"PATCH", "/api/v1/webhooks/" + id}, {"DELETE", "/api/v1/webhooks/" + id},
		{"POST", "/api/v1/webhooks/" + id + "/ping"}, {"POST", "/api/v1/webhooks/" + id + "/pause"},
		{"POST", "/api/v1/webhooks/" + id + "/resume"}, {"POST", "/api/v1/webhooks/" + id + "/rotate-secret"},
		{"GET", "/api/v1/webhooks/" + id + "/deliveries"}, {"GET", "/api/v1/webhooks/" + id + "/deliveries/" + did},
		{"POST", "/api/v1/webhooks/" + id + "/deliveries/" + did + "/retry"}, {"POST", "/api/v1/webhooks/" + id + "/recover"},
		{"GET", "/api/v1/events/evt-a"},
	} {
		var body any
		if r.method == "PATCH" {
			body = map[string]any{"apiVersion": "stolen"}
		}
		if code, _, _ := e.problem(r.method, r.path, "token-b", body); code != http.StatusNotFound {
			t.Errorf("B %s %s: %d, want 404", r.method, r.path, code)
		}
	}
	if code, _, _ := e.problem("POST", "/api/v1/events", "token-b", map[string]any{"type": "x", "data": 1, "endpointId": id}); code != http.StatusNotFound {
		t.Errorf("B publishing into A's endpoint: %d", code)
	}
	for _, p := range []string{"/api/v1/webhooks", "/api/v1/events", "/api/v1/audit"} {
		if data := e.must(http.StatusOK, "GET", p, "token-b", nil)["data"].([]any); len(data) != 0 {
			t.Errorf("B lists %s: %v", p, data)
		}
	}
	// B's own event under A's id is B's: A's stays A's.
	if b := e.must(http.StatusCreated, "POST", "/api/v1/events", "token-b", map[string]any{"id": "evt-a", "type": "y", "data": 2}); b["duplicate"] != false {
		t.Fatalf("B's publish of the same id: %v", b)
	}
	if ev := e.must(http.StatusOK, "GET", "/api/v1/events/evt-a", "token-a", nil); ev["type"] != "x" {
		t.Fatalf("A's event now %v", ev)
	}
	if after := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id, "token-a", nil); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("A's endpoint changed: %v -> %v", before, after)
	}
	if n := rc.count(); n != 1 {
		t.Fatalf("receiver got %d requests, want A's one", n)
	}
}

// TestPaginationStableUnderConcurrentInserts: paging an endpoint's deliveries, and
// the account's events, while other goroutines publish visits every row that was
// there when paging began exactly once, newest first (events oldest first).
func TestPaginationStableUnderConcurrentInserts(t *testing.T) {
	e := newEnv(t)
	// Paused (standard: held): its deliveries wait, their rows still.
	ep := e.must(http.StatusCreated, "POST", "/api/v1/webhooks", "token-a", map[string]any{
		"url": "https://hooks.example.com/x", "events": []string{"x"}})
	id := ep["id"].(string)
	e.must(http.StatusOK, "POST", "/api/v1/webhooks/"+id+"/pause", "token-a", nil)
	for i := range 40 {
		e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"id": fmt.Sprintf("evt-%02d", i), "type": "x", "data": i})
	}
	whole := e.must(http.StatusOK, "GET", "/api/v1/webhooks/"+id+"/deliveries?limit=500", "token-a", nil)["data"].([]any)
	events := e.must(http.StatusOK, "GET", "/api/v1/events?limit=500", "token-a", nil)["data"].([]any)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"id": fmt.Sprintf("new-%03d", i), "type": "x", "data": i})
		}
	}()
	// Besides the goroutine's, two events arrive between every two pages.
	n := 0
	between := func() {
		for range 2 {
			n++
			e.must(http.StatusCreated, "POST", "/api/v1/events", "token-a", map[string]any{"id": fmt.Sprintf("between-%03d", n), "type": "x", "data": n})
		}
	}
	deliveries := walkPages(t, e, "/api/v1/webhooks/"+id+"/deliveries?limit=7", between)
	evs := walkPages(t, e, "/api/v1/events?limit=7", between)
	close(stop)
	wg.Wait()
	// Newest first: deliveries that arrived before the first page may lead it; after
	// them come exactly those that were there, each once, in order.
	want := idsOf(whole)
	start := slices.Index(deliveries, want[0])
	if start < 0 || strings.Join(deliveries[start:], ",") != strings.Join(want, ",") {
		t.Fatalf("paged deliveries\n%v\nwant them to end with\n%v", deliveries, want)
	}
	for _, d := range deliveries[:start] {
		if slices.Contains(want, d) {
			t.Fatalf("delivery %s listed twice", d)
		}
	}
	// Events are oldest first: new ones come after, so the walk ends with them;
	// those that were there come first, each once, in order.
	if len(evs) < len(events) || strings.Join(evs[:len(events)], ",") != strings.Join(idsOf(events), ",") {
		t.Fatalf("paged events\n%v\nwant them to start with\n%v", evs, idsOf(events))
	}
	seen := map[string]bool{}
	for _, id := range evs {
		if seen[id] {
			t.Fatalf("event %s listed twice", id)
		}
		seen[id] = true
	}
}

// walkPages pages through path, calling between after each page.
func walkPages(t *testing.T, e *env, path string, between func()) []string {
	var ids []string
	cursor := ""
	for range 200 {
		page := e.must(http.StatusOK, "GET", path+"&cursor="+cursor, "token-a", nil)
		between()
		for _, d := range page["data"].([]any) {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		next, ok := page["nextCursor"].(string)
		if !ok {
			return ids
		}
		cursor = next
	}
	t.Fatal("paging does not end")
	return nil
}

func idsOf(rows []any) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}
