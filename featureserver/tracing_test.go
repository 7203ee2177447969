package featureserver

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The OTel variables: off without an endpoint (whatever else is set, though a bad
// value is still reported), the signal's own variables win over the general ones, the
// general endpoint is a base for /v1/traces, and every bad value names its variable.
func TestLoadTracingSettings(t *testing.T) {
	load := func(env map[string]string) (TracingSettings, error) {
		c, err := LoadConfig(func(k string) string { return env[k] }, nil)
		return c.Tracing, err
	}
	if s, err := load(map[string]string{EnvOTLPHeaders: "a=b"}); err != nil || s.Enabled() {
		t.Fatalf("without an endpoint: %+v %v, want off", s, err)
	}
	s, err := load(map[string]string{EnvOTLPEndpoint: "http://collector:4318/", EnvOTLPHeaders: "a=1,b=x%20y",
		EnvOTLPTracesHeaders: "c=3", EnvOTLPTimeout: "2500", EnvOTLPCompression: "gzip", EnvOTelServiceName: "sb",
		EnvOTelResource: "deployment.environment=prod"})
	if err != nil || s.Endpoint != "http://collector:4318/v1/traces" || len(s.Headers) != 1 || s.Headers["c"] != "3" ||
		s.Timeout != 2500*time.Millisecond || !s.Gzip || s.ServiceName != "sb" || s.Resource["deployment.environment"] != "prod" {
		t.Fatalf("settings %+v, %v", s, err)
	}
	s, err = load(map[string]string{EnvOTLPEndpoint: "http://a:4318", EnvOTLPTracesEndpoint: "https://b/traces"})
	if err != nil || s.Endpoint != "https://b/traces" || s.ServiceName != defaultServiceName || s.Timeout != 10*time.Second {
		t.Fatalf("the traces endpoint as given: %+v %v", s, err)
	}
	for _, off := range []map[string]string{
		{EnvOTLPEndpoint: "http://a:4318", EnvOTelSDKDisabled: "true"},
		{EnvOTLPEndpoint: "http://a:4318", EnvOTelTracesExporter: "none"},
	} {
		if s, err := load(off); err != nil || s.Enabled() {
			t.Fatalf("%v: %+v %v, want off", off, s, err)
		}
	}
	for name, v := range map[string]string{
		EnvOTLPEndpoint:          "collector:4318",
		EnvOTLPTracesEndpoint:    "http://user:pw@collector/v1/traces",
		EnvOTLPHeaders:           "just-a-key",
		EnvOTLPTracesHeaders:     "bad key=v",
		EnvOTLPTimeout:           "0",
		EnvOTLPTracesCompression: "zstd",
		EnvOTLPProtocol:          "http/json",
		EnvOTelTracesExporter:    "zipkin",
		EnvOTelResource:          "a=%zz",
	} {
		env := map[string]string{EnvOTLPEndpoint: "http://a:4318", name: v}
		_, err := load(env)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: %v, want a ConfigError naming it", name, v, err)
		}
	}
	bad := Config{Tracing: TracingSettings{Endpoint: "nope", Headers: map[string]string{"a b": "c"}}}.WithDefaults()
	if err := bad.validate(); err == nil || !strings.Contains(err.Error(), "Config.Tracing.Endpoint") || !strings.Contains(err.Error(), "Config.Tracing.Headers") {
		t.Fatalf("validate: %v", err)
	}
}
