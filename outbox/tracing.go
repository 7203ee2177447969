package outbox

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/transport"
)

// instrumentation names the outbox's spans' tracer.
const instrumentation = "github.com/switchboard-voice/switchboard/outbox"

// traceContext reads and writes W3C traceparent headers; the outbox uses it rather
// than the process's global propagator, so that an embedding program's choice of
// propagator never changes what a webhook carries.
var traceContext = propagation.TraceContext{}

// Attributes of the outbox's spans beyond OpenTelemetry's conventions.
const (
	attrAccount    = attribute.Key("switchboard.account")
	attrEventID    = attribute.Key("webhook.event.id")
	attrEventType  = attribute.Key("webhook.event.type")
	attrDeliveries = attribute.Key("webhook.deliveries")
	attrDuplicate  = attribute.Key("webhook.duplicate")
	attrDelivery   = attribute.Key("webhook.delivery.id")
	attrEndpoint   = attribute.Key("webhook.endpoint.id")
	attrAttempt    = attribute.Key("webhook.attempt")
	attrOutcome    = attribute.Key("webhook.outcome")
)

// startPublish starts the span of a publish (docs/outbox.md §8) and records its
// traceparent on ev, so that every attempt of its deliveries continues the trace.
// Without a tracer it does nothing and returns a nil span.
func (o *Outbox) startPublish(ctx context.Context, ev *Event) (context.Context, trace.Span) {
	if o.tracer == nil {
		return ctx, nil
	}
	ctx, span := o.tracer.Start(ctx, "publish "+ev.Type, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attrAccount.String(ev.Account), attrEventID.String(ev.ID), attrEventType.String(ev.Type)))
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	ev.TraceParent = carrier["traceparent"]
	return ctx, span
}

// endPublish ends a publish's span with what it stored.
func endPublish(span trace.Span, pub Published, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	} else {
		span.SetAttributes(attrDeliveries.Int(len(pub.Deliveries)), attrDuplicate.Bool(pub.Duplicate))
	}
	span.End()
}

// startAttempt starts the span of one attempt of job, a child of its event's publish
// (a root when the event was published untraced). The returned context carries it,
// for the traceparent the attempt sends. Without a tracer it returns ctx and nil.
func (o *Outbox) startAttempt(ctx context.Context, job outboxdriver.Job, u *url.URL) (context.Context, trace.Span) {
	if o.tracer == nil {
		return ctx, nil
	}
	if job.Event.TraceParent != "" {
		parent := traceContext.Extract(context.Background(), propagation.MapCarrier{"traceparent": job.Event.TraceParent})
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(parent))
	}
	attrs := []attribute.KeyValue{
		semconv.URLFull(transport.RedactedURL(u)), semconv.ServerAddress(u.Hostname()),
		attrAccount.String(job.Delivery.Account), attrEventID.String(job.Event.ID), attrEventType.String(job.Event.Type),
		attrDelivery.String(job.Delivery.ID), attrEndpoint.String(job.Endpoint.ID), attrAttempt.Int(job.Delivery.Attempts + 1),
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(n))
		}
	}
	return o.tracer.Start(ctx, "webhook", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endAttempt ends an attempt's span with its result: an error status for anything
// but a success; an attempt cut short by shutdown is marked released.
func endAttempt(span trace.Span, r decide.Result) {
	if span == nil {
		return
	}
	switch {
	case r.Released:
		span.SetAttributes(attrOutcome.String("released"))
	case r.Fault != nil:
		span.SetAttributes(attrOutcome.String("fault"), semconv.ErrorTypeKey.String("fault"))
		span.SetStatus(codes.Error, r.Fault.Error())
	default:
		a := r.Attempt
		class := a.Class
		if a.Status != 0 {
			span.SetAttributes(semconv.HTTPResponseStatusCode(a.Status))
		}
		span.SetAttributes(attrOutcome.String(string(class)))
		if class != ClassSuccess {
			msg := a.Error
			if msg == "" {
				msg = "HTTP " + strconv.Itoa(a.Status)
			}
			span.SetAttributes(semconv.ErrorTypeKey.String(string(class)))
			span.SetStatus(codes.Error, msg)
		}
	}
	span.End()
}

// injectTraceParent adds the traceparent of ctx's span to h: the receiver's own
// spans join the attempt's trace.
func injectTraceParent(ctx context.Context, h http.Header) {
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
}
