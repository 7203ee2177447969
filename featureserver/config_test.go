package featureserver

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	cc := c.CallControl
	if c.Listen != DefaultListen || c.DatabaseURL != DefaultDatabaseURL || c.DrainTimeout != 30*time.Second || c.MaxCalls != 10000 ||
		c.MaxCallDuration != 4*time.Hour || c.MaxCallRequests != 1000 || c.MaxCallEvents != 5000 {
		t.Errorf("node defaults: %+v", c)
	}
	if cc.HTTPTimeout != 10*time.Second || cc.UserAgent != "jambonz" || cc.WSHandshakeTimeout != 1500*time.Millisecond ||
		cc.WSAckTimeout != 5*time.Second || cc.WSMaxPayload != 24576 || cc.WSPingInterval != 0 || cc.WebhookErrorReturn != 480 {
		t.Errorf("docs/call-control.md §7 defaults: %+v", cc)
	}
}

// A Config built in Go takes the defaults LoadConfig gives an empty environment,
// from the one place they are stated (WithDefaults); the log level aside, whose zero
// is a level of its own.
func TestConfigWithDefaultsIsLoadConfigsDefault(t *testing.T) {
	t.Parallel()
	loaded, err := LoadConfig(envOf(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	built := Config{LogLevel: zerolog.InfoLevel}.WithDefaults()
	if !reflect.DeepEqual(built, loaded) {
		t.Fatalf("Config{}.WithDefaults() =\n%+v\nLoadConfig of nothing =\n%+v", built, loaded)
	}
	if err := built.validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
}

// SWITCHBOARD_DRAIN_TIMEOUT_MS=0 means no wait, not the default; it prints as set.
func TestDrainTimeoutZeroMeansNoWait(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(map[string]string{EnvDrainTimeout: "0"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DrainTimeout >= 0 || c.WithDefaults().DrainTimeout >= 0 {
		t.Fatalf("drain timeout %v, want negative (no wait), kept by WithDefaults", c.DrainTimeout)
	}
	for _, kv := range c.Printable() {
		if kv[0] == EnvDrainTimeout && kv[1] != "0" {
			t.Errorf("%s printed as %q, want 0", kv[0], kv[1])
		}
	}
}

// NewNode refuses a Config built in Go with values out of range, naming every field
// at fault at once, and touches no database.
func TestNewNodeRefusesABadConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node.db")
	cfg := Config{
		Listen: "nonsense", DatabaseURL: "sqlite:" + path, MaxCalls: -1, CallIdleTimeout: time.Millisecond,
		DrainTimeout: 2 * time.Hour, AdminToken: "short",
		CallControl: CallControlConfig{WSMaxPayload: 10, WebhookErrorReturn: 200, UserAgent: "a\r\nX-Evil: 1"},
	}
	node, err := NewNode(context.Background(), cfg, NodeOptions{})
	if err == nil {
		node.closeStores()
		t.Fatal("NewNode accepted a bad configuration")
	}
	if !errors.Is(err, ErrBadConfig) {
		t.Errorf("error %v does not wrap ErrBadConfig", err)
	}
	for _, field := range []string{"Config.Listen", "Config.MaxCalls", "Config.CallIdleTimeout", "Config.DrainTimeout", "Config.AdminToken",
		"CallControlConfig.WSMaxPayload", "CallControlConfig.WebhookErrorReturn", "CallControlConfig.UserAgent"} {
		if !strings.Contains(err.Error(), field+"=") {
			t.Errorf("error does not name %s:\n%v", field, err)
		}
	}
	if strings.Contains(err.Error(), "short") {
		t.Errorf("the error shows the admin token: %v", err)
	}
	if _, statErr := os.Stat(path); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a database was created despite the bad configuration: %v", statErr)
	}
}

func TestLoadConfigFlagsWin(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"JAMBONES_HTTP_TIMEOUT": "2000", EnvListen: "127.0.0.1:9000", EnvEgressAllow: "127.0.0.0/8, ::1,app.internal"})
	c, err := LoadConfig(env, map[string]string{"JAMBONES_HTTP_TIMEOUT": "3000", "JAMBONES_WS_PING_INTERVAL_MS": "250"})
	if err != nil {
		t.Fatal(err)
	}
	if c.CallControl.HTTPTimeout != 3*time.Second || c.CallControl.WSPingInterval != 250*time.Millisecond || c.Listen != "127.0.0.1:9000" {
		t.Errorf("got %+v", c)
	}
	want := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	if len(c.EgressAllow.Prefixes) != 2 || c.EgressAllow.Prefixes[0] != want[0] || c.EgressAllow.Prefixes[1] != want[1] ||
		len(c.EgressAllow.Hosts) != 1 || c.EgressAllow.Hosts[0] != "app.internal" {
		t.Errorf("egress allow-list %+v", c.EgressAllow)
	}
}

func TestLoadConfigRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, value string }{
		{"JAMBONES_HTTP_TIMEOUT", "abc"},
		{"JAMBONES_HTTP_TIMEOUT", "-1"},
		{"JAMBONES_HTTP_TIMEOUT", "0"},
		{"JAMBONES_HTTP_TIMEOUT", "99999999999"},
		{"JAMBONES_HTTP_TIMEOUT", "1.5"},
		{"JAMBONES_WS_HANDSHAKE_TIMEOUT_MS", "1e3"},
		{"JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT", "-5"},
		{"JAMBONES_WS_MAX_PAYLOAD", "10"},
		{"JAMBONES_WS_MAX_PAYLOAD", "999999999999"},
		{"JAMBONES_WS_PING_INTERVAL_MS", "-1"},
		{"JAMBONES_WEBHOOK_ERROR_RETURN", "200"},
		{"JAMBONES_WEBHOOK_ERROR_RETURN", "700"},
		{"JAMBONES_HTTP_USER_AGENT_HEADER", "  "},
		{"JAMBONES_HTTP_USER_AGENT_HEADER", "a\r\nX-Evil: 1"},
		{EnvListen, "nonsense"},
		{EnvListen, "127.0.0.1:99999"},
		{EnvListen, "127.0.0.1:http"},
		{EnvDatabaseURL, "mysql://x"},
		{EnvDatabaseURL, "sqlite:"},
		{EnvDatabaseURL, "postgres://%zz"},
		{EnvDatabaseURL, "postgres://u:pw@localhost/test?sslmode=bogus"},
		{EnvNodeID, "a node"},
		{EnvNodeID, "-leading-dash"},
		{EnvNodeURL, "ftp://10.0.0.1/"},
		{EnvNodeURL, "http://user:pw@10.0.0.1/"},
		{EnvNodeURL, "10.0.0.1:8080"},
		{EnvNodeLease, "999"},
		{EnvOutboxLease, "1999"},
		{EnvLogLevel, "loud"},
		{EnvDrainTimeout, "forever"},
		{EnvEgressAllow, "10.0.0.0/33"},
		{EnvEgressAllow, "not a host!"},
		{EnvMaxCalls, "0"},
		{EnvMaxCallDuration, "10"},
		{EnvMaxCallRequests, "lots"},
		{EnvMaxCallEvents, "99"},
		{EnvCallIdle, "5"},
		{EnvAdminToken, "short"},
		{EnvAdminToken, "aaaaaaaaaaaaaaaa"},
		{EnvAdminToken, "0123456789012345678901234567890"}, // 31 characters
		{EnvAdminToken, "change-me-admin-token"},           // an example the docs once showed
		{EnvOutboxEgressAllow, "10.0.0.0/33"},
		{EnvTrustedProxies, "proxy.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			_, err := LoadConfig(envOf(map[string]string{tt.name: tt.value}), nil)
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v, want ErrBadConfig", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Name != tt.name || !strings.Contains(err.Error(), tt.name) || ce.Accept == "" {
				t.Errorf("error %q does not name %s and its accepted range", err, tt.name)
			}
			if tt.name == EnvAdminToken && strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
	// Several bad values are all reported.
	_, err := LoadConfig(envOf(map[string]string{"JAMBONES_HTTP_TIMEOUT": "x", EnvMaxCalls: "y"}), nil)
	if err == nil || !strings.Contains(err.Error(), "JAMBONES_HTTP_TIMEOUT") || !strings.Contains(err.Error(), EnvMaxCalls) {
		t.Errorf("joined error %v", err)
	}
	// A bad flag is reported like a bad variable.
	if _, err := LoadConfig(envOf(nil), map[string]string{"JAMBONES_WS_MAX_PAYLOAD": "x"}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("bad override accepted: %v", err)
	}
}

func TestPrintableMasksSecrets(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(map[string]string{EnvAdminToken: "super-secret-admin-token-0123456789",
		EnvDatabaseURL: "postgres://sb:super-secret-password@db.example:5432/sb"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range c.Printable() {
		if strings.Contains(kv[1], "super-secret") {
			t.Errorf("%s printed in clear", kv[0])
		}
	}
	// A refused PostgreSQL URL is named without its password.
	_, err = LoadConfig(envOf(map[string]string{EnvDatabaseURL: "postgres://sb:super-secret-password@db.example:5432/sb?sslmode=bogus"}), nil)
	if err == nil || strings.Contains(err.Error(), "super-secret") || !strings.Contains(err.Error(), EnvDatabaseURL) {
		t.Errorf("refusing a bad PostgreSQL URL: %v", err)
	}
}
