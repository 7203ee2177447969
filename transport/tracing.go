package transport

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

	"github.com/switchboard-voice/switchboard/retry"
)

// instrumentation names the tracer of the hook client's spans.
const instrumentation = "github.com/switchboard-voice/switchboard/transport"

// attrAttempt and attrOutcome name an attempt's number and failure class on its span.
const (
	attrAttempt = attribute.Key("hook.attempt")
	attrOutcome = attribute.Key("hook.outcome")
)

// startHookSpan starts the client span of one hook attempt, a child of ctx's span,
// and writes its traceparent into header (W3C Trace Context, whatever propagator the
// process set globally: what an application receives must not depend on it).
func startHookSpan(ctx context.Context, tracer trace.Tracer, method string, u *url.URL, retryNumber int, header http.Header) trace.Span {
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(method), semconv.URLFull(RedactedURL(u)), semconv.ServerAddress(u.Hostname()),
		attrAttempt.Int(retryNumber + 1),
	}
	if retryNumber > 0 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(retryNumber))
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		attrs = append(attrs, semconv.ServerPort(p))
	}
	ctx, span := tracer.Start(ctx, "hook "+method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(header))
	return span
}

// endHookSpan ends an attempt's span with its outcome: an error status for anything
// but a success.
func endHookSpan(span trace.Span, a Attempt) {
	if a.Status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(a.Status))
	}
	span.SetAttributes(attrOutcome.String(string(a.Class)))
	if a.Class != retry.Success {
		span.SetAttributes(semconv.ErrorTypeKey.String(string(a.Class)))
		msg := "HTTP " + strconv.Itoa(a.Status)
		if a.Err != nil {
			msg = a.Err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// RedactedURL is u as a span or a log may show it: no user-info, query or fragment,
// which can carry credentials.
func RedactedURL(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}
