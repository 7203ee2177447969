package testkit

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// OTLPReceiver is an OTLP/HTTP trace receiver on loopback, as a collector is: it
// accepts protobuf exports at /v1/traces (gzipped or not), decodes them, and keeps
// every span it got with its resource's attributes. A body it cannot decode is
// answered 400 and fails the test.
type OTLPReceiver struct {
	*httptest.Server
	t       testing.TB
	mu      sync.Mutex
	spans   []OTLPSpan
	headers []http.Header
	arrived chan struct{}
}

// OTLPSpan is one received span, its ids in hex as a traceparent writes them.
type OTLPSpan struct {
	Name, TraceID, SpanID, ParentSpanID string
	Kind                                tracepb.Span_SpanKind
	Attributes                          map[string]string
	Resource                            map[string]string
	StatusError                         bool
}

// NewOTLPReceiver starts a receiver, closed when the test ends.
func NewOTLPReceiver(t testing.TB) *OTLPReceiver {
	r := &OTLPReceiver{t: t, arrived: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// TracesURL is what OTEL_EXPORTER_OTLP_TRACES_ENDPOINT takes.
func (r *OTLPReceiver) TracesURL() string { return r.URL + "/v1/traces" }

func (r *OTLPReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.t.Errorf("OTLP receiver: %s %s (%s): want a protobuf POST to /v1/traces", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
		http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			r.t.Errorf("OTLP receiver: gzip: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	var export coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &export)
	}
	if err != nil {
		r.t.Errorf("OTLP receiver: decoding an export: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []OTLPSpan
	for _, rs := range export.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, OTLPSpan{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Kind: s.GetKind(), Attributes: attrs(s.GetAttributes()), Resource: res,
					StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// Spans returns the spans received so far.
func (r *OTLPReceiver) Spans() []OTLPSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]OTLPSpan(nil), r.spans...)
}

// Headers returns the headers of each export received so far.
func (r *OTLPReceiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// WaitFor waits until cond holds of the spans received, checking again at each
// export (and every 100 ms, for an exporter in another process); past within it
// fails the test with what arrived.
func (r *OTLPReceiver) WaitFor(within time.Duration, what string, cond func([]OTLPSpan) bool) []OTLPSpan {
	r.t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		spans := r.Spans()
		if cond(spans) {
			return spans
		}
		select {
		case <-r.arrived:
		case <-tick.C:
		case <-deadline.C:
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			r.t.Fatalf("OTLP receiver: %s did not arrive within %s; got spans %q", what, within, names)
			return nil
		}
	}
}
