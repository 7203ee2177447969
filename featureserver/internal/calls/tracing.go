package calls

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// instrumentation names the tracer of calls' spans.
const instrumentation = "github.com/switchboard-voice/switchboard/featureserver/calls"

// Attributes of a call's span.
const (
	attrCallSid     = attribute.Key("call.sid")
	attrAccount     = attribute.Key("switchboard.account")
	attrApplication = attribute.Key("call.application_sid")
	attrDirection   = attribute.Key("call.direction")
	attrStatus      = attribute.Key("call.status")
	attrReason      = attribute.Key("call.reason")
)

// startSpan starts the span of call sid, a child of parent (the span that asked for
// the call: the API request's), on ctx (the call's context, which its hooks and
// status notifications inherit). Without a tracer it returns ctx and a nil span.
func (m *Manager) startSpan(ctx context.Context, parent trace.SpanContext, req Request, sid string) (context.Context, trace.Span) {
	if m.tracer == nil {
		return ctx, nil
	}
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	return m.tracer.Start(ctx, "call", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attrCallSid.String(sid), attrAccount.String(req.Account.Sid), attrApplication.String(req.ApplicationSid),
		attrDirection.String("outbound")))
}

// endSpan ends a call's span with how the call ended: an error status for a call
// that failed or could not be recorded.
func endSpan(span trace.Span, view nodestore.Call, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(attrStatus.String(view.CallStatus), attrReason.String(view.Reason))
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	case view.CallStatus == string(callctl.StatusFailed):
		span.SetStatus(codes.Error, view.Reason)
	}
	span.End()
}
