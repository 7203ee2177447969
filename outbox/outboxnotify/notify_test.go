package outboxnotify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/internal/smtpmail"
	"github.com/switchboard-voice/switchboard/internal/smtpmail/smtptest"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxnotify"
	"github.com/switchboard-voice/switchboard/outbox/sqlitestore"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// hook is a loopback receiver answering code, recording what it got.
type hook struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
	bodies  [][]byte
	arrived chan struct{}
}

func newHook(t *testing.T, code int) *hook {
	h := &hook{arrived: make(chan struct{}, 16)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.headers, h.bodies = append(h.headers, r.Header.Clone()), append(h.bodies, b)
		h.mu.Unlock()
		w.WriteHeader(code)
		h.arrived <- struct{}{}
	}))
	t.Cleanup(h.Close)
	return h
}

func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestNoticesReachWebhookAndMail: an endpoint paused by a 410, one disabled by the
// failure threshold, and one an operator removes each send their notice to the
// account's operational webhook, as a signed event of the notice's type, and by
// e-mail to the account's recipients through a real SMTP server on loopback.
func TestNoticesReachWebhookAndMail(t *testing.T) {
	ctx := context.Background()
	sink := smtptest.NewSink(t)
	mailer, err := smtpmail.Parse(sink.URL() + "?from=notices@switchboard.example")
	if err != nil {
		t.Fatal(err)
	}
	ops := newHook(t, 204)
	secret := webhooksig.NewSecret()
	n, err := outboxnotify.New(outboxnotify.Config{Mail: mailer, Recipients: func(_ context.Context, account string) (outboxnotify.Recipients, error) {
		if account != "acct" {
			return outboxnotify.Recipients{}, nil
		}
		return outboxnotify.Recipients{WebhookURL: ops.URL + "/ops", WebhookSecret: secret, Emails: []string{"owner@acme.example"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "o.db"), sqlitestore.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rules := transport.PublicOnly()
	rules.AllowLoopback = true
	ob, err := outbox.Open(ctx, outbox.Config{Store: st, Egress: &rules, Notify: n.Notify})
	if err != nil {
		t.Fatal(err)
	}
	n.Start(ob)
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ob.Close(ctx)
		if err := n.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	allowHTTP := true
	gone := newHook(t, 410)
	failing := newHook(t, 500)
	goneEP, _ := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: gone.URL, Events: []string{"x"}, Overrides: outbox.Overrides{AllowHTTP: &allowHTTP}})
	disable, pause1 := outbox.AutoPauseDisable, 1
	failEP, _ := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: failing.URL, Events: []string{"y"},
		Overrides: outbox.Overrides{AllowHTTP: &allowHTTP, AutoPause: &disable, AutoPauseFailures: &pause1, AutoPauseAfterSecs: new(float64)}})
	removed, _ := ob.CreateEndpoint(ctx, outbox.EndpointSpec{Account: "acct", URL: "https://hooks.example.com/z", Events: []string{"z"}})

	want := []struct{ endpoint, action, reason, actor string }{
		{goneEP.ID, outbox.AuditPaused, outbox.ReasonGone, outbox.ActorSystem},
		{failEP.ID, outbox.AuditDisabled, outbox.Reason5xx, outbox.ActorSystem},
		{removed.ID, outbox.AuditRemoved, "retired", "tok_1"},
	}
	for i, w := range want {
		switch i {
		case 0, 1:
			if _, err := ob.Publish(ctx, outbox.Event{Account: "acct", Type: []string{"x", "y"}[i], Data: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			wait(t, []*hook{gone, failing}[i].arrived, "the failing attempt")
		case 2:
			if err := ob.RemoveEndpoint(ctx, "acct", removed.ID, outbox.Actor{ID: "tok_1", Reason: "retired"}); err != nil {
				t.Fatal(err)
			}
		}
		wait(t, ops.arrived, "the notice on the operational webhook")
		wait(t, sink.Arrived(), "the notice e-mail")
		ops.mu.Lock()
		h, body := ops.headers[i], ops.bodies[i]
		ops.mu.Unlock()
		v, _ := webhooksig.NewVerifier(secret)
		if err := v.Verify(h, body); err != nil {
			t.Fatalf("notice %d signature: %v", i, err)
		}
		var ev struct {
			Type string `json:"type"`
			Data struct {
				EndpointID, URL, Action, Reason, Actor string
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != w.action || ev.Data.EndpointID != w.endpoint || ev.Data.Reason != w.reason || ev.Data.Actor != w.actor || ev.Data.Action != w.action {
			t.Fatalf("notice %d: %s %+v, want %+v", i, ev.Type, ev.Data, w)
		}
		m := sink.Messages()[i]
		if strings.Join(m.To, ",") != "owner@acme.example" || m.From != "notices@switchboard.example" ||
			!strings.Contains(m.Data, "Subject: Switchboard: webhook endpoint "+w.endpoint+" "+strings.TrimPrefix(w.action, "endpoint.")+" ("+w.reason+")") {
			t.Fatalf("e-mail %d: %+v", i, m)
		}
	}
	// The operational endpoint is one managed endpoint of the account, installed once.
	eps, _ := ob.ListEndpoints(ctx, "acct")
	var opsEPs int
	for _, ep := range eps {
		if ep.URL == ops.URL+"/ops" {
			opsEPs++
			if !ep.Managed {
				t.Error("the operational endpoint is not managed")
			}
		}
	}
	if opsEPs != 1 {
		t.Fatalf("%d operational endpoints", opsEPs)
	}
}

// TestQueueFullDropsWithoutBlocking: Notify never blocks the dispatcher: past the
// queue's size a notice is dropped (logged); Close before Start returns at once.
func TestQueueFullDropsWithoutBlocking(t *testing.T) {
	n, err := outboxnotify.New(outboxnotify.Config{QueueSize: 1, Recipients: func(context.Context, string) (outboxnotify.Recipients, error) {
		return outboxnotify.Recipients{}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for range 10 {
			n.Notify(outbox.Notice{Account: "a"})
		}
		close(done)
	}()
	wait(t, done, "Notify to return")
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n.Notify(outbox.Notice{}) // after Close: dropped, no panic
	if _, err := outboxnotify.New(outboxnotify.Config{}); err == nil {
		t.Fatal("a Config without Recipients")
	}
}
