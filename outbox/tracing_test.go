package outbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/outbox"
)

// tracedHarness is a harness whose second outbox traces into the recorder it returns.
func tracedHarness(t *testing.T, script func(n int, r *http.Request) reply, hook func(ctx context.Context, r *outbox.Request) error) (*harness, *outbox.Outbox, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, script)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ob := h.another(outbox.Config{HTTPClient: loopbackClient(h.recv), TracerProvider: tp, Request: hook})
	return h, ob, rec, tp.Tracer("test")
}

// spansNamed returns the ended spans of rec whose name is name.
func spansNamed(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// A traced publish is a child of the publisher's span; the event keeps its
// traceparent, and each attempt, however late, is a child of it whose traceparent the
// webhook carries, so that the receiver's spans join the trace. A failed attempt's
// span says so.
func TestTracingPublishAndAttempts(t *testing.T) {
	t.Parallel()
	h, ob, rec, tracer := tracedHarness(t, func(n int, _ *http.Request) reply {
		if n == 0 {
			return reply{status: 503}
		}
		return reply{status: 204}
	}, nil)
	ctx, parent := tracer.Start(context.Background(), "request")
	pub, err := ob.Publish(ctx, outbox.Event{Account: "acct", Type: "call.status", Data: json.RawMessage(`{"n":1}`)})
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	pubSpans := spansNamed(rec, "publish call.status")
	if len(pubSpans) != 1 {
		t.Fatalf("%d publish spans", len(pubSpans))
	}
	ps := pubSpans[0]
	if ps.Parent().SpanID() != parent.SpanContext().SpanID() || ps.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("publish span's parent %s kind %s, want %s, producer", ps.Parent().SpanID(), ps.SpanKind(), parent.SpanContext().SpanID())
	}
	ev, err := ob.GetEvent(h.ctx, "acct", pub.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": ev.TraceParent}))
	if sc.SpanID() != ps.SpanContext().SpanID() || sc.TraceID() != ps.SpanContext().TraceID() {
		t.Fatalf("the event keeps traceparent %q, want the publish span's", ev.TraceParent)
	}

	h.runOn(ob)
	h.clock.Advance(10 * time.Minute) // past the first wait
	h.runOn(ob)
	reqs := h.recv.requests()
	attempts := spansNamed(rec, "webhook POST")
	if len(reqs) != 2 || len(attempts) != 2 {
		t.Fatalf("%d requests, %d attempt spans; want 2 of each", len(reqs), len(attempts))
	}
	for i, a := range attempts {
		if a.Parent().SpanID() != ps.SpanContext().SpanID() || a.SpanContext().TraceID() != ps.SpanContext().TraceID() || a.SpanKind() != trace.SpanKindClient {
			t.Fatalf("attempt %d's span is not a client child of the publish", i+1)
		}
		got := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(reqs[i].header)))
		if got.SpanID() != a.SpanContext().SpanID() || got.TraceID() != a.SpanContext().TraceID() {
			t.Fatalf("attempt %d sent traceparent %q, want its span's", i+1, reqs[i].header.Get("traceparent"))
		}
	}
	if attempts[0].Status().Code != codes.Error || attempts[1].Status().Code == codes.Error {
		t.Fatalf("attempt statuses %v, %v: want the 503 an error, the 204 not", attempts[0].Status(), attempts[1].Status())
	}
	attrs := map[string]string{}
	for _, kv := range attempts[0].Attributes() {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["http.response.status_code"] != "503" || attrs["webhook.outcome"] != "http_5xx" || attrs["webhook.attempt"] != "1" ||
		attrs["webhook.delivery.id"] != pub.Deliveries[0].ID || strings.Contains(attrs["url.full"], "?") {
		t.Fatalf("first attempt's attributes: %v", attrs)
	}
}

// Each attempt records the headers it sent, credentials masked: the delivery log
// shows what went out without showing a secret.
func TestAttemptRecordsMaskedHeaders(t *testing.T) {
	t.Parallel()
	h, ob, _, _ := tracedHarness(t, status(204), func(_ context.Context, r *outbox.Request) error {
		r.SetBasicAuth("user", "pw")
		r.Header.Set("X-Api-Key", "k-123")
		r.Header.Set("X-Tenant", "blue")
		r.Header.Set("X-Upstream", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")
		r.Header.Set("X-Forward", "Bearer abc")
		return nil
	})
	d, as := sendOne(t, ob, "acct")
	if len(as) != 1 || d.Status != outbox.DeliverySucceeded {
		t.Fatalf("%+v %+v", d, as)
	}
	got := as[0].RequestHeaders
	sent := h.recv.requests()[0].header
	for name, want := range map[string]string{
		"Authorization": "Basic ****", "X-Api-Key": "****", "X-Tenant": "blue", "Content-Type": "application/json",
		"X-Upstream": "****", "X-Forward": "Bearer ****",
		"Webhook-Id": sent.Get("webhook-id"), "Webhook-Signature": sent.Get("webhook-signature"), "Traceparent": sent.Get("traceparent"),
	} {
		if v := got.Get(name); v != want || want == "" {
			t.Errorf("recorded %s %q, want %q", name, v, want)
		}
	}
	if sent.Get("Authorization") == "Basic ****" {
		t.Fatal("the mask reached the request")
	}
}

// Without a tracer provider nothing is traced: no traceparent goes out.
func TestNoTracingSendsNoTraceParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, outbox.ProfileStandard, outbox.Overrides{}, status(204))
	h.publish()
	h.run()
	if tp := h.recv.requests()[0].header.Get("traceparent"); tp != "" {
		t.Fatalf("traceparent %q sent without tracing", tp)
	}
}
