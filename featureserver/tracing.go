package featureserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry's standard variables that a node reads (docs/outbox.md §8): tracing
// is on when an OTLP endpoint is set, and off otherwise.
const (
	EnvOTLPEndpoint          = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint    = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvOTLPHeaders           = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvOTLPTracesHeaders     = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvOTLPTimeout           = "OTEL_EXPORTER_OTLP_TIMEOUT"
	EnvOTLPTracesTimeout     = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
	EnvOTLPCompression       = "OTEL_EXPORTER_OTLP_COMPRESSION"
	EnvOTLPTracesCompression = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"
	EnvOTLPProtocol          = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvOTLPTracesProtocol    = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvOTelServiceName       = "OTEL_SERVICE_NAME"
	EnvOTelResource          = "OTEL_RESOURCE_ATTRIBUTES"
	EnvOTelSDKDisabled       = "OTEL_SDK_DISABLED"
	EnvOTelTracesExporter    = "OTEL_TRACES_EXPORTER"
)

// defaultServiceName names the node's spans' service when OTEL_SERVICE_NAME does not.
const defaultServiceName = "switchboard"

var envOTLPTimeout = intSetting{EnvOTLPTimeout, 1, 600_000, "milliseconds"}

// TracingSettings are where a node sends its traces: OTLP over HTTP (protobuf).
type TracingSettings struct {
	// Endpoint is the URL traces are posted to (an OTLP/HTTP receiver's
	// .../v1/traces). Default none: nothing is traced, and no hook or webhook
	// carries a traceparent.
	Endpoint string
	// Headers are sent with every export (an API key of the tracing backend).
	// Secret. Default none.
	Headers map[string]string
	// Timeout bounds one export. Default 10 s (the OTLP default).
	Timeout time.Duration
	// Gzip compresses exports. Default false.
	Gzip bool
	// ServiceName is the spans' service.name. Default "switchboard".
	ServiceName string
	// Resource are further attributes of the spans' resource
	// (OTEL_RESOURCE_ATTRIBUTES, e.g. deployment.environment=prod). Default none.
	Resource map[string]string
}

// Enabled reports whether the node traces.
func (s TracingSettings) Enabled() bool { return s.Endpoint != "" }

// WithDefaults returns s with every zero value replaced by its default.
func (s TracingSettings) WithDefaults() TracingSettings {
	setDefault(&s.Timeout, 10*time.Second)
	if s.ServiceName == "" {
		s.ServiceName = defaultServiceName
	}
	return s
}

// validate reports every bad value of settings built in Go at once.
func (s TracingSettings) validate() error {
	var errs []error
	if s.Endpoint != "" {
		if err := checkOTLPEndpoint(s.Endpoint); err != "" {
			errs = append(errs, &ConfigError{Name: "Config.Tracing.Endpoint", Value: s.Endpoint, Accept: err})
		}
	}
	errs = append(errs, envOTLPTimeout.checkDuration("Config.Tracing.Timeout", s.Timeout))
	for k := range s.Headers {
		if !validHeaderName(k) {
			errs = append(errs, &ConfigError{Name: "Config.Tracing.Headers", Value: k, Accept: "HTTP header names"})
		}
	}
	return errors.Join(errs...)
}

// loadTracingSettings reads OpenTelemetry's standard variables; the signal's own
// (OTEL_EXPORTER_OTLP_TRACES_*) win over the general ones, as the specification
// says. Bad values are *ConfigError.
func loadTracingSettings(get func(string) string) (TracingSettings, error) {
	var s TracingSettings
	if v := strings.TrimSpace(get(EnvOTelSDKDisabled)); strings.EqualFold(v, "true") {
		return s, nil
	}
	switch v := strings.TrimSpace(get(EnvOTelTracesExporter)); v {
	case "", "otlp":
	case "none":
		return s, nil
	default:
		return s, &ConfigError{Name: EnvOTelTracesExporter, Value: v, Accept: "otlp or none (traces go out over OTLP/HTTP only)"}
	}
	var errs []error
	signal := func(specific, general string) (name, value string) {
		if v := get(specific); v != "" {
			return specific, v
		}
		return general, get(general)
	}
	if name, v := signal(EnvOTLPTracesEndpoint, EnvOTLPEndpoint); v != "" {
		endpoint := v
		if name == EnvOTLPEndpoint {
			// The general endpoint is a base: each signal posts to its own path.
			endpoint = strings.TrimSuffix(v, "/") + "/v1/traces"
		}
		if why := checkOTLPEndpoint(endpoint); why != "" {
			errs = append(errs, &ConfigError{Name: name, Value: v, Accept: why})
		} else {
			s.Endpoint = endpoint
		}
	}
	if name, v := signal(EnvOTLPTracesHeaders, EnvOTLPHeaders); v != "" {
		h, err := ParseOTelList(v)
		if err != nil {
			errs = append(errs, &ConfigError{Name: name, Value: "(hidden)", Accept: "key=value pairs separated by commas, values percent-encoded: " + err.Error()})
		} else {
			for k := range h {
				if !validHeaderName(k) {
					errs = append(errs, &ConfigError{Name: name, Value: "(hidden)", Accept: fmt.Sprintf("HTTP header names as keys (%q is not one)", k)})
				}
			}
			s.Headers = h
		}
	}
	if name, v := signal(EnvOTLPTracesTimeout, EnvOTLPTimeout); v != "" {
		setting := envOTLPTimeout
		setting.name = name
		d, err := setting.duration(v)
		errs = append(errs, err)
		s.Timeout = d
	}
	if name, v := signal(EnvOTLPTracesCompression, EnvOTLPCompression); v != "" {
		switch strings.TrimSpace(v) {
		case "gzip":
			s.Gzip = true
		case "none":
		default:
			errs = append(errs, &ConfigError{Name: name, Value: v, Accept: "gzip or none"})
		}
	}
	if name, v := signal(EnvOTLPTracesProtocol, EnvOTLPProtocol); v != "" && strings.TrimSpace(v) != "http/protobuf" {
		errs = append(errs, &ConfigError{Name: name, Value: v, Accept: "http/protobuf (the node exports OTLP over HTTP only)"})
	}
	s.ServiceName = strings.TrimSpace(get(EnvOTelServiceName))
	if v := get(EnvOTelResource); v != "" {
		attrs, err := ParseOTelList(v)
		if err != nil {
			errs = append(errs, &ConfigError{Name: EnvOTelResource, Value: v, Accept: "key=value pairs separated by commas, values percent-encoded: " + err.Error()})
		}
		s.Resource = attrs
	}
	if !s.Enabled() {
		// Settings of an exporter that is not there change nothing, but are still
		// checked: a typo is reported before someone sets the endpoint.
		return TracingSettings{}, errors.Join(errs...)
	}
	return s, errors.Join(errs...)
}

// checkOTLPEndpoint returns why v is not an OTLP/HTTP endpoint URL, or "".
func checkOTLPEndpoint(v string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return "an http(s)://host[:port][/path] URL without credentials (put them in OTEL_EXPORTER_OTLP_HEADERS)"
	}
	return ""
}

// ParseOTelList parses the key=value lists of OpenTelemetry's variables
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES): pairs separated by commas,
// blanks around them ignored, values percent-encoded (as W3C Baggage writes them).
// An empty list is an empty map; a pair without "=", an empty key, a key that is
// not a token, a repeated key or a bad percent-encoding is an error naming it.
func ParseOTelList(v string) (map[string]string, error) {
	out := map[string]string{}
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, val, ok := strings.Cut(item, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", item)
		}
		if !validToken(k) {
			return nil, fmt.Errorf("key %q is not a token", k)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("key %q given twice", k)
		}
		dec, err := url.PathUnescape(val)
		if err != nil {
			return nil, fmt.Errorf("the value of %q is not percent-encoded", k)
		}
		out[k] = dec
	}
	return out, nil
}

// validToken accepts an RFC 9110 token (header names, OTel keys).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderName accepts an HTTP header name.
func validHeaderName(s string) bool { return validToken(s) }

// newTracerProvider exports the node's spans to s.Endpoint in batches; the spans'
// resource names the service, its version and the node.
func newTracerProvider(ctx context.Context, s TracingSettings, version, node string) (*sdktrace.TracerProvider, error) {
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(s.Endpoint), otlptracehttp.WithTimeout(s.Timeout)}
	if len(s.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(s.Headers))
	}
	if s.Gzip {
		opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(s.ServiceName), semconv.ServiceInstanceID(node)}
	if version != "" {
		attrs = append(attrs, semconv.ServiceVersion(version))
	}
	keys := make([]string, 0, len(s.Resource))
	for k := range s.Resource {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != string(semconv.ServiceNameKey) { // OTEL_SERVICE_NAME wins, as the specification says
			attrs = append(attrs, attribute.String(k, s.Resource[k]))
		}
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, attrs...))), nil
}

// traceAPI gives every request to the node's API and console a server span, a
// child of the caller's traceparent when it sent one, named by its route
// (docs/outbox.md §8). Only a node that traces wraps its handler: one that does not
// pays nothing.
func traceAPI(next http.Handler, mux *http.ServeMux, tracer trace.Tracer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		name := r.Method
		attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path)}
		if _, pattern := mux.Handler(r); pattern != "" {
			route := pattern
			if _, path, ok := strings.Cut(pattern, " "); ok {
				route = path // "GET /v1/..." → "/v1/..."
			}
			name += " " + route
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		rec := &spanStatus{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r.WithContext(ctx))
		span.SetAttributes(semconv.HTTPResponseStatusCode(rec.status))
		if rec.status >= 500 {
			span.SetStatus(codes.Error, strconv.Itoa(rec.status)+" "+http.StatusText(rec.status))
		}
	})
}

// spanStatus remembers the status of an answer.
type spanStatus struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *spanStatus) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *spanStatus) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer (flushes).
func (s *spanStatus) Unwrap() http.ResponseWriter { return s.ResponseWriter }
