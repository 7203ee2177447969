package transport_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/transporttest"
)

// With a tracer provider, each attempt of a hook is a client span, a child of the
// caller's span, and sends its own traceparent; a failed attempt's span is an error.
// Without one, no traceparent is sent.
func TestHookAttemptSpans(t *testing.T) {
	t.Parallel()
	srv := transporttest.NewServer(t)
	srv.Script("/call", transporttest.Status(500), transporttest.JSON(200, `[]`))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	client, _ := newHookClient(t, transport.HookClientOptions{TracerProvider: tp})
	ctx, call := tp.Tracer("test").Start(context.Background(), "call")
	if _, err := client.Do(ctx, transport.HookRequest{Target: mustTarget(t, srv.URL+"/call?secret=x#rc=1&rp=5xx")}); err != nil {
		t.Fatal(err)
	}
	call.End()
	reqs := srv.RequestsTo("/call")
	var spans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "hook POST" {
			spans = append(spans, s)
		}
	}
	if len(reqs) != 2 || len(spans) != 2 {
		t.Fatalf("%d requests, %d hook spans; want 2 each", len(reqs), len(spans))
	}
	for i, s := range spans {
		sent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(reqs[i].Header)))
		if s.Parent().SpanID() != call.SpanContext().SpanID() || sent.SpanID() != s.SpanContext().SpanID() || sent.TraceID() != call.SpanContext().TraceID() {
			t.Fatalf("attempt %d: span parent %s, traceparent %q; want a child of the call whose id is sent", i+1, s.Parent().SpanID(), reqs[i].Header.Get("traceparent"))
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "url.full" && kv.Value.AsString() != srv.URL+"/call" {
				t.Fatalf("url.full %q: want it without query", kv.Value.AsString())
			}
		}
	}
	if spans[0].Status().Code != codes.Error || spans[1].Status().Code == codes.Error {
		t.Fatalf("statuses %v %v: want the 500 an error, the 200 not", spans[0].Status(), spans[1].Status())
	}

	plain, _ := newHookClient(t, transport.HookClientOptions{})
	srv.Script("/plain", transporttest.JSON(200, `[]`))
	if _, err := plain.Do(ctx, transport.HookRequest{Target: mustTarget(t, srv.URL+"/plain")}); err != nil {
		t.Fatal(err)
	}
	if tp := srv.RequestsTo("/plain")[0].Header.Get("traceparent"); tp != "" {
		t.Fatalf("traceparent %q sent without tracing", tp)
	}
}
