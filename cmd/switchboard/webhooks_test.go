package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
)

// webhooksEnv is an outbox served by its API on loopback, and a receiver.
type webhooksEnv struct {
	t        *testing.T
	api      string
	recorded chan struct{}
	answer   atomic.Int32 // the receiver's status
	got      atomic.Int32
}

func newWebhooksEnv(t *testing.T) *webhooksEnv {
	t.Helper()
	ctx := context.Background()
	e := &webhooksEnv{t: t, recorded: make(chan struct{}, 1)}
	e.answer.Store(204)
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "o.db"), sqlitestore.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	rules := transport.PublicOnly()
	rules.AllowLoopback = true
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, Egress: &rules, Observe: func(outbox.Delivery, outbox.Attempt) {
		select {
		case e.recorded <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := outboxapi.Handler(outboxapi.Config{Outbox: ob, Egress: &rules, Authenticate: func(_ context.Context, token string) (outboxapi.Principal, error) {
		if token != "tok-secret" {
			return outboxapi.Principal{}, outboxapi.ErrUnauthenticated
		}
		return outboxapi.Principal{Account: "acct", Actor: "tok_1"}, nil
	}}, "test", "1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	e.api = srv.URL
	t.Cleanup(func() {
		srv.Close()
		_ = ob.Close(ctx)
		_ = st.Close()
	})
	return e
}

func (e *webhooksEnv) receiver() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		e.got.Add(1)
		w.WriteHeader(int(e.answer.Load()))
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	e.t.Cleanup(srv.Close)
	return srv.URL
}

// cli runs `switchboard webhooks args...` with the API in the environment.
func (e *webhooksEnv) cli(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{envAPIURL: e.api, envAPIToken: "tok-secret"}
	code := run(context.Background(), append([]string{"webhooks"}, args...), strings.NewReader(""), &out, &errOut,
		func(k string) string { return env[k] })
	return code, out.String(), errOut.String()
}

func (e *webhooksEnv) jsonOf(want int, args ...string) map[string]any {
	e.t.Helper()
	code, out, errOut := e.cli(append(args, "--json")...)
	if code != want {
		e.t.Fatalf("webhooks %v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		e.t.Fatalf("webhooks %v --json: %q is not one JSON object: %v", args, out, err)
	}
	return m
}

// waitDelivery waits until the delivery's status is want, reading it with the CLI.
func (e *webhooksEnv) waitDelivery(ep, id, want string) map[string]any {
	e.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		d := e.jsonOf(0, "attempts", ep, id)
		if d["status"] == want {
			return d
		}
		select {
		case <-e.recorded:
		case <-deadline:
			e.t.Fatalf("delivery %s is %v, want %s", id, d["status"], want)
		}
	}
}

// TestWebhooksCLI drives every subcommand against a live API: human output, --json
// (one object, the API's answer), and the exit statuses 0, 1 (the API refused: not
// found, conflict) and 2 (bad usage or input: nothing done).
func TestWebhooksCLI(t *testing.T) {
	e := newWebhooksEnv(t)
	recv := e.receiver()
	if code, out, _ := e.cli("list"); code != 0 || !strings.HasPrefix(out, "ID") {
		t.Fatalf("list: %d %q", code, out)
	}
	// Bad input: exit 2, the problem names the field, nothing created.
	code, out, errOut := e.cli("create", recv+"/hook", "--policy", `{"retries":3}`, "--json")
	if code != 2 || !strings.Contains(out, "policy.retries") || !strings.Contains(errOut, "policy.retries") {
		t.Fatalf("create with a bad policy: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := e.cli("create", recv+"/hook", "--policy", `[`); code != 2 || !strings.Contains(errOut, "--policy") {
		t.Fatalf("create with bad JSON: %d %q", code, errOut)
	}
	if data := e.jsonOf(0, "list")["data"].([]any); len(data) != 0 {
		t.Fatalf("bad creates created %v", data)
	}

	code, out, errOut = e.cli("create", recv+"/hook", "--events", "invoice.paid", "--policy", `{"scheduleSeconds":[0],"allowHttp":true}`)
	if code != 0 || !strings.Contains(out, "secret: whsec_") || !strings.Contains(errOut, "shown this once") {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	id := strings.Fields(out)[1]
	if show := e.jsonOf(0, "show", id); show["id"] != id || show["status"] != "ACTIVE" {
		t.Fatalf("show: %v", show)
	}
	if code, out, _ := e.cli("show", id); code != 0 || !strings.Contains(out, "status:") || !strings.Contains(out, `{"scheduleSeconds":[0],"allowHttp":true}`) {
		t.Fatalf("show: %d %q", code, out)
	}
	if code, out, _ := e.cli("list"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "invoice.paid") {
		t.Fatalf("list: %d %q", code, out)
	}

	ping := e.jsonOf(0, "ping", id)
	if ping["type"] != "settings.webhook.ping" {
		t.Fatalf("ping: %v", ping)
	}
	d := e.waitDelivery(id, ping["id"].(string), "SUCCEEDED")
	if as := d["attempts"].([]any); len(as) != 1 || as[0].(map[string]any)["status"] != 204.0 {
		t.Fatalf("attempts %v", d)
	}
	if code, out, _ := e.cli("attempts", id, ping["id"].(string)); code != 0 || !strings.Contains(out, "success") || !strings.Contains(out, "SUCCEEDED") {
		t.Fatalf("attempts: %d %q", code, out)
	}
	if code, out, _ := e.cli("deliveries", id, "--status", "SUCCEEDED"); code != 0 || !strings.Contains(out, ping["id"].(string)) {
		t.Fatalf("deliveries: %d %q", code, out)
	}

	// A FAILED delivery: retried, and recovered.
	e.answer.Store(500)
	failed := e.jsonOf(0, "ping", id)["id"].(string)
	e.waitDelivery(id, failed, "FAILED")
	if code, _, errOut := e.cli("retry", id, "dlv_nope"); code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("retry of an unknown delivery: %d %q", code, errOut)
	}
	e.answer.Store(204)
	if code, out, _ := e.cli("retry", id, failed, "--reason", "receiver fixed"); code != 0 || !strings.Contains(out, "retry queued") {
		t.Fatalf("retry: %d %q", code, out)
	}
	e.waitDelivery(id, failed, "SUCCEEDED")
	if code, out, _ := e.cli("recover", id, "--since", "1h"); code != 0 || out != "recovered 0 FAILED deliveries of "+id+"\n" {
		t.Fatalf("recover: %d %q", code, out)
	}
	if code, _, errOut := e.cli("recover", id, "--since", "last week"); code != 2 || !strings.Contains(errOut, "--since") {
		t.Fatalf("recover --since bad: %d %q", code, errOut)
	}

	if p := e.jsonOf(0, "pause", id, "--reason", "maintenance"); p["status"] != "PAUSED" || p["pauseReason"] != "MANUAL" {
		t.Fatalf("pause: %v", p)
	}
	if code, _, errOut := e.cli("retry", id, failed); code != 1 || !strings.Contains(errOut, "409") {
		t.Fatalf("retry while paused: %d %q", code, errOut)
	}
	if code, out, _ := e.cli("resume", id); code != 0 || !strings.Contains(out, "ACTIVE") {
		t.Fatalf("resume: %d %q", code, out)
	}
	if code, out, _ := e.cli("rotate-secret", id, "--grace", "1h"); code != 0 || !strings.Contains(out, "secret: whsec_") {
		t.Fatalf("rotate-secret: %d %q", code, out)
	}
	if code, _, _ := e.cli("rotate-secret", id, "--grace", "900h"); code != 2 {
		t.Fatalf("rotate-secret --grace 900h: %d", code)
	}

	// Usage: no token, a bad one, a bad URL, wrong arguments.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"webhooks", "list"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" }); code != 2 || !strings.Contains(stderr.String(), envAPIURL) {
		t.Fatalf("no URL: %d %q", code, stderr.String())
	}
	if code, _, errOut := e.cli("list", "--token", "wrong"); code != 2 || !strings.Contains(errOut, "401") {
		t.Fatalf("bad token: %d %q", code, errOut)
	}
	if code, _, _ := e.cli("list", "--url", "ftp://x"); code != 2 {
		t.Fatalf("bad --url: %d", code)
	}
	// Wrong arguments name the command and what it takes (cobra's "accepts 2 arg(s),
	// received 1" named neither: a reader gave attempts the delivery id alone).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "switchboard: webhooks show takes ID (got 0 arguments)"},
		{[]string{"attempts", "dlv_1"}, "switchboard: webhooks attempts takes ID DELIVERY_ID (got 1 argument)"},
		{[]string{"list", "ep_1"}, "switchboard: webhooks list takes no arguments (got 1 argument)"},
		{[]string{"event-types", "show"}, "switchboard: webhooks event-types show takes NAME (got 0 arguments)"},
	} {
		if code, _, errOut := e.cli(tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := e.cli("show", "ep_nope"); code != 1 || !strings.Contains(errOut, "404") {
		t.Fatalf("show of an unknown endpoint: %d %q", code, errOut)
	}
	if code, _, _ := e.cli("nonsense"); code != 2 {
		t.Fatalf("unknown subcommand: %d", code)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-04-30T10:00:00Z": time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC),
		"24h":                  now.Add(-24 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-1h"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}
