package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// publish, update, delete and audit against a live API: what they send is what the
// flags say, bad input exits 2 naming the flag or the field and changes nothing.
func TestWebhooksChangeCLI(t *testing.T) {
	e := newWebhooksEnv(t)
	recv := e.receiver()
	code, out, _ := e.cli("create", recv+"/hook", "--events", "invoice.paid", "--policy", `{"scheduleSeconds":[0],"allowHttp":true}`)
	if code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	id := strings.Fields(out)[1]

	// publish: --data as JSON, from a file and from stdin; bad data sends nothing.
	pub := e.jsonOf(0, "publish", "invoice.paid", "--data", `{"amount": 42}`, "--id", "inv-1")
	if ev := pub["event"].(map[string]any); ev["id"] != "inv-1" || len(pub["deliveries"].([]any)) != 1 {
		t.Fatalf("publish: %v", pub)
	}
	if code, out, _ := e.cli("publish", "invoice.paid", "--data", `{"amount":42}`, "--id", "inv-1"); code != 0 || !strings.Contains(out, "already published") {
		t.Fatalf("publish again: %d %q", code, out)
	}
	first := e.jsonOf(0, "publish", "invoice.paid", "--data", `{"k":1}`, "--idempotency-key", "order-9")
	again := e.jsonOf(0, "publish", "invoice.paid", "--data", `{"k":1}`, "--idempotency-key", "order-9")
	if first["event"].(map[string]any)["id"] != again["event"].(map[string]any)["id"] {
		t.Fatalf("the same Idempotency-Key published twice: %v, %v", first, again)
	}
	if code, _, errOut := e.cli("publish", "invoice.paid", "--data", `{"k":2}`, "--idempotency-key", "order-9"); code != 1 || !strings.Contains(errOut, "409") {
		t.Fatalf("the key with another body: %d %q", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "ev.json")
	if err := os.WriteFile(file, []byte(`{"from":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := e.cli("publish", "invoice.paid", "--data", "@"+file); code != 0 || !strings.Contains(out, "): 1 delivery\n") || !strings.Contains(out, id) {
		t.Fatalf("publish @file: %d %q", code, out)
	}
	var stdout, stderr testkit.SyncBuffer
	env := map[string]string{envAPIURL: e.api, envAPIToken: "tok-secret"}
	if code := run(context.Background(), []string{"webhooks", "publish", "other.type", "--data", "-", "--json"}, strings.NewReader(`{"from":"stdin"}`),
		&stdout, &stderr, func(k string) string { return env[k] }); code != 0 || !strings.Contains(stdout.String(), `"from":"stdin"`) {
		t.Fatalf("publish from stdin: %d %s %s", code, stdout.String(), stderr.String())
	}
	before := e.jsonOf(0, "deliveries", id)["data"].([]any)
	for _, bad := range [][]string{
		{"publish", "invoice.paid", "--data", `{"amount":`},
		{"publish", "invoice.paid", "--data", "@/nonexistent/ev.json"},
		{"publish", "invoice.paid", "--created-at", "yesterday"},
	} {
		if code, _, errOut := e.cli(bad...); code != 2 || !strings.Contains(errOut, bad[2]) {
			t.Fatalf("%v: exit %d %q, want 2 naming %s", bad, code, errOut, bad[2])
		}
	}
	if code, out, errOut := e.cli("publish", "invoice paid", "--json"); code != 2 || !strings.Contains(out, "body.type") {
		t.Fatalf("publish with a bad type: %d %q %q", code, out, errOut)
	}
	if after := e.jsonOf(0, "deliveries", id)["data"].([]any); len(after) != len(before) {
		t.Fatalf("bad publishes made deliveries: %d, was %d", len(after), len(before))
	}

	// update: only the fields given change; --field carries any field of the API.
	up := e.jsonOf(0, "update", id, "--events", "a.b,c.d", "--field", `apiVersion="2026-06-01"`)
	if up["apiVersion"] != "2026-06-01" || !strings.Contains(strings.Join(anyStrings(up["events"]), ","), "a.b,c.d") || up["url"] != recv+"/hook" {
		t.Fatalf("update: %v", up)
	}
	// The endpoint's routing: headers set one by one (an empty value removes one),
	// channels and the rate limit replaced.
	up = e.jsonOf(0, "update", id, "--header", "X-Tenant: blue", "--header", "Authorization: Bearer t0k", "--channels", "eu,us", "--rate-limit", "5")
	if h := up["headers"].(map[string]any); h["X-Tenant"] != "blue" || h["Authorization"] == "Bearer t0k" || up["rateLimit"] != 5.0 ||
		strings.Join(anyStrings(up["channels"]), ",") != "eu,us" {
		t.Fatalf("update of the routing: %v", up)
	}
	up = e.jsonOf(0, "update", id, "--header", "X-Tenant:", "--channels", "", "--rate-limit", "0")
	if h, _ := up["headers"].(map[string]any); h["X-Tenant"] != nil || len(anyStrings(up["channels"])) != 0 || (up["rateLimit"] != nil && up["rateLimit"] != 0.0) {
		t.Fatalf("update removing the routing: %v", up)
	}
	if code, _, errOut := e.cli("update", id, "--header", "no colon"); code != 2 || !strings.Contains(errOut, "--header") {
		t.Fatalf("update --header without a colon: %d %q", code, errOut)
	}
	// A policy replaces the overrides as a whole; without allowHttp the http URL would be refused.
	if code, out, errOut := e.cli("update", id, "--policy", `{"allowHttp":true}`); code != 0 || !strings.Contains(out, `policy:          {"allowHttp":true}`) {
		t.Fatalf("update --policy: %d %q %q", code, out, errOut)
	}
	for _, bad := range [][]string{
		{"update", id},
		{"update", id, "--field", "rateLimit"},
		{"update", id, "--field", "apiVersion=v2"},
		{"update", id, "--field", `url="x"`, "--endpoint-url", "https://example.com/"},
		{"update", id, "--policy", "[]"},
	} {
		if code, _, errOut := e.cli(bad...); code != 2 {
			t.Fatalf("%v: exit %d %q, want 2", bad, code, errOut)
		}
	}
	code, out, errOut := e.cli("update", id, "--endpoint-url", "https://example.com/x", "--policy", `{"retries":3}`, "--json")
	if code != 2 || !strings.Contains(out, "policy.retries") || !strings.Contains(errOut, "policy.retries") {
		t.Fatalf("update with a bad policy: %d %q %q", code, out, errOut)
	}
	if show := e.jsonOf(0, "show", id); show["url"] != recv+"/hook" {
		t.Fatalf("a refused update changed the endpoint: %v", show)
	}

	// delete, then the audit log names each change with its reason.
	if code, out, _ := e.cli("delete", id, "--reason", "moved"); code != 0 || out != "removed "+id+"\n" {
		t.Fatalf("delete: %d %q", code, out)
	}
	if code, _, errOut := e.cli("delete", id); code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("delete again: %d %q", code, errOut)
	}
	code, out, _ = e.cli("audit", "--endpoint", id)
	if code != 0 || !strings.Contains(out, "endpoint.removed") || !strings.Contains(out, "moved") || !strings.Contains(out, "tok_1") ||
		!strings.Contains(out, "endpoint.created") {
		t.Fatalf("audit: %d %q", code, out)
	}
	if audit := e.jsonOf(0, "audit", "--limit", "1"); len(audit["data"].([]any)) != 1 || audit["nextCursor"] == nil {
		t.Fatalf("audit --limit 1: %v", audit)
	}
	if code, _, _ := e.cli("audit", "--limit", "0"); code != 2 {
		t.Fatalf("audit --limit 0: %d", code)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// tail prints each new delivery and each attempt as it is made, --json as one
// object a line, and ends cleanly when interrupted.
func TestWebhooksTail(t *testing.T) {
	e := newWebhooksEnv(t)
	recv := e.receiver()
	code, out, _ := e.cli("create", recv+"/hook", "--policy", `{"scheduleSeconds":[0.2],"allowHttp":true}`)
	if code != 0 {
		t.Fatalf("create: %d %q", code, out)
	}
	id := strings.Fields(out)[1]
	old := e.jsonOf(0, "publish", "before.tail")["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	e.waitDelivery(id, old, "SUCCEEDED")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testkit.SyncBuffer
	env := map[string]string{envAPIURL: e.api, envAPIToken: "tok-secret"}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"webhooks", "tail", "--interval", "100ms", "--json"}, strings.NewReader(""), &stdout, &stderr,
			func(k string) string { return env[k] })
	}()
	waitText(t, &stderr, "following 1 endpoint")
	e.answer.Store(500) // the first attempt fails, the retry succeeds
	dlv := e.jsonOf(0, "publish", "during.tail")["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	e.waitDelivery(id, dlv, "FAILED")
	e.answer.Store(204)
	e.jsonOf(0, "retry", id, dlv)
	e.waitDelivery(id, dlv, "SUCCEEDED")
	waitText(t, &stdout, `"status":204`)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail exited %d: %s", code, stderr.String())
	}
	var kinds []string
	for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			Kind     string `json:"kind"`
			Delivery struct {
				ID string `json:"id"`
			} `json:"delivery"`
			Attempt struct {
				Number int `json:"number"`
				Status int `json:"status"`
			} `json:"attempt"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("tail --json line %q: %v", line, err)
		}
		if m.Delivery.ID == old {
			t.Fatalf("tail printed a delivery finished before it started: %s", line)
		}
		kinds = append(kinds, m.Kind+":"+itoa(m.Attempt.Number)+":"+itoa(m.Attempt.Status))
	}
	// The attempt 1 and 2 of the first run fail (a 0.2 s wait between), the retry's succeeds.
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "delivery:0:0 attempt:1:500") || !strings.HasSuffix(got, ":204") {
		t.Fatalf("tail printed %q", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitText waits until b holds s: the command under test writes it from its own
// goroutine.
func waitText(t *testing.T, b *testkit.SyncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not appear in %q", s, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
