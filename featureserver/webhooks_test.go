package featureserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/smtpmail/smtptest"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// logBuffer collects a node's log lines for a test, and tells of each one written.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // made by newLogBuffer
}

func newLogBuffer() *logBuffer { return &logBuffer{written: make(chan struct{}, 1)} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.written <- struct{}{}:
	default:
	}
	return n, err
}

// waitLine waits until a line of the level that match accepts is written.
func (b *logBuffer) waitLine(t *testing.T, level string, match func(map[string]any) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, l := range b.lines(level) {
			if match(l) {
				return
			}
		}
		select {
		case <-b.written:
		case <-deadline:
			t.Fatalf("no %s line as expected in:\n%s", level, b.buf.String())
		}
	}
}

// attemptsSeen counts the outbox attempts a node recorded, per delivery (the node's
// Observe hook), and tells of each one.
type attemptsSeen struct {
	mu      sync.Mutex
	count   map[string]int
	changed chan struct{}
}

func newAttemptsSeen() *attemptsSeen {
	return &attemptsSeen{count: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (s *attemptsSeen) observe(d outbox.Delivery, _ outbox.Attempt) {
	s.mu.Lock()
	s.count[d.ID]++
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// wait waits until the delivery has an attempt on record.
func (s *attemptsSeen) wait(t *testing.T, deliveryID string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		s.mu.Lock()
		n := s.count[deliveryID]
		s.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("delivery %s was never attempted", deliveryID)
		}
	}
}

func (b *logBuffer) lines(level string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(b.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["level"] == level {
			out = append(out, m)
		}
	}
	return out
}

// TestNodeServesTheOutboxAPI: the outbox API is on the node beside the call API, in
// its OpenAPI document, authenticated by the accounts' API tokens. A call's record
// names its status deliveries, which the account reads there (another account gets
// 404); a failed status attempt is logged at warn; the node's deny-list refuses an
// endpoint URL; pausing the status endpoint notifies the account's operational
// webhook (signed with its status webhook secret) and its e-mail recipients through
// SMTP.
func TestNodeServesTheOutboxAPI(t *testing.T) {
	t.Parallel()
	sink := smtptest.NewSink(t)
	logs, attempts := newLogBuffer(), newAttemptsSeen()
	cfg := testConfig(t)
	cfg.Outbox.EgressDeny = []string{".blocked.example"}
	cfg.Outbox.SMTPURL = sink.URL() + "?from=switchboard@node.example"
	n := runNodeWith(t, cfg, zerolog.New(logs), nodeHooks{observe: attempts.observe})
	a, b := n.createAccount("a"), n.createAccount("b")

	code, _, raw := n.do("GET", "/openapi.json", "", nil, nil)
	if code != http.StatusOK {
		t.Fatalf("openapi.json: %d", code)
	}
	for _, p := range []string{`"/api/v1/webhooks"`, `"/api/v1/webhooks/{id}/deliveries/{deliveryId}"`, `"/api/v1/events"`, `"/api/v1/audit"`,
		`"/v1/Accounts/{account}/Notifications"`, `"/v1/Accounts/{account}/Calls"`} {
		if !bytes.Contains(raw, []byte(p)) {
			t.Errorf("openapi.json lacks %s", p)
		}
	}

	var received atomic.Int32
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if received.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer status.Close()
	v := n.waitCall(a, n.startCall(a, hangupApp(t).URL, map[string]any{"url": status.URL + "/status"}))
	if len(v.StatusDeliveries) == 0 {
		t.Fatalf("the call's record names no status delivery: %+v", v)
	}
	sd := v.StatusDeliveries[0]
	path := "/api/v1/webhooks/" + sd.EndpointID + "/deliveries/" + sd.DeliveryID
	var d struct {
		EventID  string `json:"eventId"`
		Type     string `json:"type"`
		Attempts []struct {
			Status int `json:"status"`
		} `json:"attempts"`
	}
	attempts.wait(t, sd.DeliveryID)
	if code, _, raw := n.do("GET", path, a.APIToken, nil, &d); code != http.StatusOK || len(d.Attempts) == 0 {
		t.Fatalf("the status delivery once attempted: %d %s", code, raw)
	}
	if d.EventID != sd.EventID || d.Type != statushooks.EventType || !strings.HasPrefix(d.EventID, "call-status:"+v.CallSid+":") {
		t.Fatalf("status delivery %+v", d)
	}
	if code, _, _ := n.do("GET", path, b.APIToken, nil, nil); code != http.StatusNotFound {
		t.Fatalf("another account reads the status delivery: %d", code)
	}
	logs.waitLine(t, "warn", func(l map[string]any) bool {
		return l["endpoint"] == sd.EndpointID && l["status"] == 502.0 && l["url"] == status.URL+"/status"
	})

	if code, _, raw := n.do("POST", "/api/v1/webhooks", a.APIToken, map[string]any{"url": "https://hooks.blocked.example/x"}, nil); code != http.StatusUnprocessableEntity || !bytes.Contains(raw, []byte("body.url")) {
		t.Fatalf("a denied host: %d %s", code, raw)
	}

	// Notices: the operational webhook and e-mail.
	var got sync.Mutex
	var noticeBody []byte
	var noticeHeader http.Header
	noticed := make(chan struct{}, 1)
	ops := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got.Lock()
		noticeBody, noticeHeader = body, r.Header.Clone()
		got.Unlock()
		w.WriteHeader(http.StatusNoContent)
		select {
		case noticed <- struct{}{}:
		default:
		}
	}))
	defer ops.Close()
	for _, bad := range []map[string]any{{"webhook_url": "ftp://x", "emails": []string{}}, {"webhook_url": "", "emails": []string{"not mail"}}, {"webhook_url": "", "emails": []string{}, "cc": 1}} {
		if code, _, raw := n.do("PUT", "/v1/Accounts/"+a.AccountSid+"/Notifications", a.APIToken, bad, nil); code != http.StatusUnprocessableEntity {
			t.Fatalf("bad notifications %v: %d %s", bad, code, raw)
		}
	}
	settings := map[string]any{"webhook_url": ops.URL + "/ops", "emails": []string{"owner@a.example"}}
	if code, _, raw := n.do("PUT", "/v1/Accounts/"+a.AccountSid+"/Notifications", a.APIToken, settings, nil); code != http.StatusOK {
		t.Fatalf("set notifications: %d %s", code, raw)
	}
	if code, _, _ := n.do("PUT", "/v1/Accounts/"+a.AccountSid+"/Notifications", b.APIToken, settings, nil); code != http.StatusNotFound {
		t.Fatalf("B sets A's notifications: %d", code)
	}
	if code, _, raw := n.do("POST", "/api/v1/webhooks/"+sd.EndpointID+"/pause?reason=test", a.APIToken, nil, nil); code != http.StatusOK {
		t.Fatalf("pause: %d %s", code, raw)
	}
	select {
	case <-noticed:
	case <-time.After(20 * time.Second):
		t.Fatal("no notice on the operational webhook")
	}
	var acct struct {
		StatusWebhookSecret string `json:"status_webhook_secret"`
	}
	n.do("GET", "/v1/Accounts/"+a.AccountSid, a.APIToken, nil, &acct)
	got.Lock()
	vf, _ := webhooksig.NewVerifier(acct.StatusWebhookSecret)
	err := vf.Verify(noticeHeader, noticeBody)
	var notice struct {
		Type string `json:"type"`
		Data struct {
			EndpointID, Actor, Reason string
		} `json:"data"`
	}
	_ = json.Unmarshal(noticeBody, &notice)
	got.Unlock()
	if err != nil || notice.Type != "endpoint.paused" || notice.Data.EndpointID != sd.EndpointID || notice.Data.Reason != "test" || !strings.HasPrefix(notice.Data.Actor, "tok_") {
		t.Fatalf("notice %+v, signature %v", notice, err)
	}
	select {
	case <-sink.Arrived():
	case <-time.After(20 * time.Second):
		t.Fatal("no notice e-mail")
	}
	if m := sink.Messages()[0]; m.To[0] != "owner@a.example" || !strings.Contains(m.Data, "webhook endpoint "+sd.EndpointID+" paused") {
		t.Fatalf("e-mail %+v", m)
	}
}

// TestOutboxSettings: SWITCHBOARD_EGRESS_DENY_HOSTS, SWITCHBOARD_SMTP_URL and
// SWITCHBOARD_EGRESS_PROXY are read, and a bad value is a *ConfigError naming its
// variable (the SMTP and proxy URLs, which may carry a password, hidden).
func TestOutboxSettings(t *testing.T) {
	cfg, err := LoadConfig(envOf(map[string]string{EnvEgressDeny: "Blocked.Example, .internal.example,*.corp.example", EnvSMTPURL: "smtp://u:pw@mail.example:2525"}), nil)
	if err != nil || strings.Join(cfg.Outbox.EgressDeny, ",") != "blocked.example,.internal.example,*.corp.example" || cfg.Outbox.SMTPURL == "" {
		t.Fatalf("%+v %v", cfg.Outbox, err)
	}
	if rules := callControlRules(cfg); len(rules.DenyHosts) != 3 {
		t.Fatalf("call-control rules deny %v", rules.DenyHosts)
	}
	for k, v := range map[string]string{EnvEgressDeny: "ok.example,bad host", EnvSMTPURL: "http://u:secretpw@mail.example",
		EnvEgressProxy: "https://u:secretpw@proxy.example:3128"} {
		_, err := LoadConfig(envOf(map[string]string{k: v}), nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Name != k || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("%s=%q: %v", k, v, err)
		}
	}
	for _, kv := range cfg.Printable() {
		if kv[0] == EnvSMTPURL && kv[1] != "********" {
			t.Errorf("print-config shows the SMTP URL: %q", kv[1])
		}
	}
	cfg, err = LoadConfig(envOf(map[string]string{EnvEgressProxy: "http://relay:secretpw@10.0.0.8:3128"}), nil)
	if err != nil || cfg.Outbox.EgressProxy != "http://relay:secretpw@10.0.0.8:3128" {
		t.Fatalf("%s: %+v %v", EnvEgressProxy, cfg.Outbox, err)
	}
	for _, kv := range cfg.Printable() {
		if kv[0] == EnvEgressProxy && kv[1] != "http://relay:xxxxx@10.0.0.8:3128" {
			t.Errorf("print-config shows the proxy as %q", kv[1])
		}
	}
}
