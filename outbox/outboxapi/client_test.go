package outboxapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

func newClient(t *testing.T, base, token string) *outboxapi.Client {
	t.Helper()
	c, err := outboxapi.NewClient(base, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send is outboxapi.Send that fails the test on an error.
func send[T any](t *testing.T, c *outboxapi.Client, call outboxapi.Call[T]) (T, json.RawMessage) {
	t.Helper()
	v, raw, err := outboxapi.Send(t.Context(), c, call)
	if err != nil {
		t.Fatalf("%s %s: %v", call.Method, call.Path, err)
	}
	return v, raw
}

// TestClientDrivesEveryOperation: each Call of the client against the API, its
// answer decoded into the server's own types, and the body as received beside it.
func TestClientDrivesEveryOperation(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	c := newClient(t, e.base, "token-a")
	allowHTTP := true

	created, raw := send(t, c, outboxapi.CreateWebhook(outboxapi.CreateWebhookRequest{URL: rc.URL + "/hook",
		Events: []string{"invoice.paid"}, Policy: &outbox.Overrides{AllowHTTP: &allowHTTP, ScheduleSeconds: []float64{0}}}))
	if created.ID == "" || !strings.HasPrefix(created.Secret, "whsec_") || created.Status != "ACTIVE" {
		t.Fatalf("create: %+v", created)
	}
	var asReceived map[string]any
	if err := json.Unmarshal(raw, &asReceived); err != nil || asReceived["secret"] != created.Secret {
		t.Fatalf("create's body as received: %s (%v)", raw, err)
	}
	id := created.ID

	if got, _ := send(t, c, outboxapi.GetWebhook(id)); got.URL != rc.URL+"/hook" || !slices.Equal(got.Events, []string{"invoice.paid"}) {
		t.Fatalf("get: %+v", got)
	}
	if list, _ := send(t, c, outboxapi.ListWebhooks(outboxapi.Page{Limit: 1})); len(list.Data) != 1 || list.Data[0].ID != id || list.NextCursor != nil {
		t.Fatalf("list: %+v", list)
	}
	apiVersion := "2026-01-01"
	if got, _ := send(t, c, outboxapi.UpdateWebhook(id, outboxapi.UpdateWebhookRequest{APIVersion: &apiVersion})); got.APIVersion != apiVersion {
		t.Fatalf("update: %+v", got)
	}

	pub, _ := send(t, c, outboxapi.PublishEvent(outboxapi.PublishRequest{ID: "evt_client_1", Type: "invoice.paid", Data: json.RawMessage(`{"n":1}`)}))
	if pub.Event.ID != "evt_client_1" || len(pub.Deliveries) != 1 || pub.Duplicate {
		t.Fatalf("publish: %+v", pub)
	}
	if again, _ := send(t, c, outboxapi.PublishEvent(outboxapi.PublishRequest{ID: "evt_client_1", Type: "invoice.paid", Data: json.RawMessage(`{"n":1}`)})); !again.Duplicate {
		t.Fatalf("publish again: %+v", again)
	}
	if ev, _ := send(t, c, outboxapi.GetEvent("evt_client_1")); string(ev.Data) != `{"n":1}` {
		t.Fatalf("get event: %+v", ev)
	}
	if evs, _ := send(t, c, outboxapi.ListEvents(outboxapi.EventFilter{Type: "invoice.paid", Since: time.Now().Add(-time.Hour)})); len(evs.Data) != 1 {
		t.Fatalf("list events: %+v", evs)
	}

	dlv := pub.Deliveries[0].ID
	var detail outboxapi.WebhookDeliveryDetail
	e.waitFor("the delivery to succeed", func() bool {
		detail, _ = send(t, c, outboxapi.GetDelivery(id, dlv))
		return detail.Status == "SUCCEEDED"
	})
	if len(detail.Attempts) != 1 || detail.Attempts[0].Status != http.StatusNoContent || detail.Attempts[0].Outcome != "success" {
		t.Fatalf("delivery: %+v", detail)
	}
	if ds, _ := send(t, c, outboxapi.ListDeliveries(id, outboxapi.DeliveryFilter{Status: "SUCCEEDED", EventID: "evt_client_1"})); len(ds.Data) != 1 || ds.Data[0].Attempts != 1 {
		t.Fatalf("deliveries: %+v", ds)
	}
	if ds, _ := send(t, c, outboxapi.ListDeliveries(id, outboxapi.DeliveryFilter{Status: "FAILED"})); len(ds.Data) != 0 {
		t.Fatalf("FAILED deliveries: %+v", ds)
	}
	if d, _ := send(t, c, outboxapi.RetryDelivery(id, dlv, "again")); d.ID != dlv || d.Status != "PENDING" {
		t.Fatalf("retry: %+v", d)
	}
	if n, _ := send(t, c, outboxapi.RecoverWebhook(id, time.Now().Add(-time.Hour), "")); n.Recovered != 0 {
		t.Fatalf("recover: %+v", n)
	}
	if ping, _ := send(t, c, outboxapi.PingWebhook(id)); ping.Type != "settings.webhook.ping" {
		t.Fatalf("ping: %+v", ping)
	}
	if ep, _ := send(t, c, outboxapi.PauseWebhook(id, "maintenance")); ep.Status != "PAUSED" || ep.PauseReason == nil || *ep.PauseReason != "MANUAL" {
		t.Fatalf("pause: %+v", ep)
	}
	if ep, _ := send(t, c, outboxapi.ResumeWebhook(id, "")); ep.Status != "ACTIVE" {
		t.Fatalf("resume: %+v", ep)
	}
	if ep, _ := send(t, c, outboxapi.RotateWebhookSecret(id, time.Hour, "leaked")); ep.Secret == "" || ep.Secret == created.Secret {
		t.Fatalf("rotate: %+v", ep)
	}
	audit, _ := send(t, c, outboxapi.ListAudit(id, outboxapi.Page{}))
	var actions []string
	for _, a := range audit.Data {
		actions = append(actions, a.Action)
	}
	for _, want := range []string{"endpoint.created", "delivery.retried", "endpoint.paused", "endpoint.resumed", "endpoint.secret_rotated"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit lacks %s: %v", want, actions)
		}
	}
	if _, raw := send(t, c, outboxapi.DeleteWebhook(id, "done")); len(raw) != 0 {
		t.Fatalf("delete answered %q", raw)
	}
	if _, _, err := outboxapi.Send(t.Context(), c, outboxapi.GetWebhook(id)); !isProblem(err, http.StatusNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func isProblem(err error, status int) bool {
	var p *outboxapi.ProblemError
	return errors.As(err, &p) && p.Status == status
}

// TestClientProblems: an answer that is not a success is a *ProblemError with the
// document as received and one line naming the rejected field; an answer that is not
// a problem document keeps its text; a wrong token is a 401.
func TestClientProblems(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.base, "token-a")
	// A policy passed through as its user wrote it: the server, not the client, refuses the unknown key.
	call := outboxapi.CreateWebhook(outboxapi.CreateWebhookRequest{})
	call.Body = map[string]any{"url": "https://hooks.example.com/in", "policy": json.RawMessage(`{"retries":3}`)}
	_, raw, err := outboxapi.Send(t.Context(), c, call)
	var p *outboxapi.ProblemError
	if !errors.As(err, &p) || p.Status != http.StatusUnprocessableEntity || raw != nil {
		t.Fatalf("create with an unknown policy key: %v %s", err, raw)
	}
	if !strings.Contains(err.Error(), "body.policy.retries") || !strings.HasPrefix(err.Error(), "HTTP 422: ") || !json.Valid(p.Problem) {
		t.Fatalf("problem %q, document %s", err, p.Problem)
	}
	if list, _ := send(t, c, outboxapi.ListWebhooks(outboxapi.Page{})); len(list.Data) != 0 {
		t.Fatalf("a refused create created %+v", list.Data)
	}

	if _, _, err := outboxapi.Send(t.Context(), newClient(t, e.base, "nope"), outboxapi.ListWebhooks(outboxapi.Page{})); !isProblem(err, http.StatusUnauthorized) {
		t.Fatalf("unknown token: %v", err)
	}

	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, _, err = outboxapi.Send(t.Context(), newClient(t, proxy.URL, "token-a"), outboxapi.GetWebhook("ep_1"))
	if !errors.As(err, &p) || p.Problem != nil || err.Error() != "HTTP 502: bad gateway" {
		t.Fatalf("a proxy's error page: %v", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, _, err := outboxapi.Send(ctx, newClient(t, closed.URL, "token-a"), outboxapi.GetWebhook("ep_1")); err == nil || errors.As(err, &p) ||
		!strings.HasPrefix(err.Error(), "GET "+closed.URL+"/api/v1/webhooks/ep_1: ") {
		t.Fatalf("no answer: %v", err)
	}
}

// TestNewClientRefusesABadBaseURL: only http(s)://host is a base URL.
func TestNewClientRefusesABadBaseURL(t *testing.T) {
	for _, base := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "http://[::1"} {
		if _, err := outboxapi.NewClient(base, "t", nil); !errors.Is(err, outboxapi.ErrBadBaseURL) {
			t.Errorf("NewClient(%q): %v", base, err)
		}
	}
	if _, err := outboxapi.NewClient("https://node.example.com/prefix", "t", nil); err != nil {
		t.Error(err)
	}
}

// TestSchemaNamesStay: the shared request and list types are aliases of unnamed
// structs, so that the OpenAPI document names their schemas after their operations
// as before (a client generated from it keeps its type names).
func TestSchemaNamesStay(t *testing.T) {
	e := newEnv(t)
	_, doc := e.call("GET", "/openapi.json", "", nil)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"CreateWebhookInputBody", "UpdateWebhookInputBody", "PublishInputBody", "PublishOutputBody",
		"WebhookListOutputBody", "DeliveryListOutputBody", "EventListOutputBody", "AuditListOutputBody", "RecoverOutputBody"} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("no schema %s in the OpenAPI document", name)
		}
	}
}
