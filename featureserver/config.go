package featureserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// The node's own variables. Each has a flag of the same meaning in `switchboard serve`
// (flags win over the environment).
const (
	EnvListen       = "SWITCHBOARD_LISTEN"
	EnvDatabaseURL  = "SWITCHBOARD_DATABASE_URL"
	EnvLogLevel     = "SWITCHBOARD_LOG_LEVEL"
	EnvDrainTimeout = "SWITCHBOARD_DRAIN_TIMEOUT_MS"
	EnvEgressAllow  = "SWITCHBOARD_EGRESS_ALLOW"
	EnvAdminToken   = "SWITCHBOARD_ADMIN_TOKEN"
	EnvCallIdle     = "SWITCHBOARD_CALL_IDLE_TIMEOUT_MS"
	EnvMaxCalls     = "SWITCHBOARD_MAX_CALLS"
)

// Defaults of the node's own settings.
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultDatabaseURL = "sqlite:switchboard.db"
)

var (
	envDrainTimeout = intSetting{EnvDrainTimeout, 30_000, 0, 3_600_000, "milliseconds"}
	envCallIdle     = intSetting{EnvCallIdle, 300_000, 1000, 86_400_000, "milliseconds"}
	envMaxCalls     = intSetting{EnvMaxCalls, 10_000, 1, 1_000_000, ""}
)

// Config is a node's whole configuration.
type Config struct {
	// Listen is the API's address. Default 127.0.0.1:8080.
	Listen string
	// DatabaseURL locates the node's database: "sqlite:PATH" (default
	// sqlite:switchboard.db) or a plain file path.
	DatabaseURL string
	// LogLevel is the zerolog level. Default info.
	LogLevel zerolog.Level
	// DrainTimeout is how long SIGTERM lets active calls finish. Default 30 s.
	DrainTimeout time.Duration
	// EgressAllow lists CIDRs and host names that hooks may reach even when the
	// call-control egress rules would refuse them (loopback, link-local).
	EgressAllow EgressAllowList
	// AdminToken, when set, may create accounts through the API. Secret.
	AdminToken string
	// CallIdleTimeout ends a WebSocket call whose verbs ran out and that has heard
	// nothing for this long. Default 5 minutes.
	CallIdleTimeout time.Duration
	// MaxCalls caps concurrent calls; more are refused with 503. Default 10000.
	MaxCalls int
	// CallControl holds the JAMBONES_* settings.
	CallControl CallControlConfig
	// Outbox holds the webhook outbox's settings (egress deny-list, SMTP).
	Outbox OutboxSettings
}

// EgressAllowList is a parsed SWITCHBOARD_EGRESS_ALLOW.
type EgressAllowList struct {
	Prefixes []netip.Prefix
	Hosts    []string
}

// String renders the list as it is written in the variable.
func (l EgressAllowList) String() string {
	parts := make([]string, 0, len(l.Prefixes)+len(l.Hosts))
	for _, p := range l.Prefixes {
		parts = append(parts, p.String())
	}
	return strings.Join(append(parts, l.Hosts...), ",")
}

// LoadConfig reads the configuration from the environment (getenv) and from overrides,
// which map a variable name to the value of its flag and win over the environment. All
// bad values are reported together, each naming its variable and accepted range.
func LoadConfig(getenv func(string) string, overrides map[string]string) (Config, error) {
	get := func(name string) string {
		if v, ok := overrides[name]; ok {
			return v
		}
		return getenv(name)
	}
	var errs []error
	cc, err := LoadCallControlConfig(get)
	errs = append(errs, err)
	c := Config{
		Listen:      DefaultListen,
		DatabaseURL: DefaultDatabaseURL,
		LogLevel:    zerolog.InfoLevel,
		AdminToken:  get(EnvAdminToken),
		CallControl: cc,
	}
	if v := get(EnvListen); v != "" {
		if _, port, err := net.SplitHostPort(v); err != nil || !validPort(port) {
			errs = append(errs, &ConfigError{Name: EnvListen, Value: v, Accept: "host:port with a port in [0, 65535], e.g. 127.0.0.1:8080 or :8080"})
		} else {
			c.Listen = v
		}
	}
	if v := get(EnvDatabaseURL); v != "" {
		if _, err := ParseDatabaseURL(v); err != nil {
			errs = append(errs, err)
		} else {
			c.DatabaseURL = v
		}
	}
	if v := get(EnvLogLevel); v != "" {
		level, err := zerolog.ParseLevel(strings.ToLower(v))
		if err != nil || level == zerolog.NoLevel {
			errs = append(errs, &ConfigError{Name: EnvLogLevel, Value: v, Accept: "one of trace, debug, info, warn, error, disabled"})
		} else {
			c.LogLevel = level
		}
	}
	if c.AdminToken != "" && len(c.AdminToken) < minTokenLength {
		errs = append(errs, &ConfigError{Name: EnvAdminToken, Value: "(hidden)", Accept: fmt.Sprintf("at least %d characters", minTokenLength)})
	}
	var n int64
	c.DrainTimeout, err = envDrainTimeout.duration(get(EnvDrainTimeout))
	errs = append(errs, err)
	c.CallIdleTimeout, err = envCallIdle.duration(get(EnvCallIdle))
	errs = append(errs, err)
	n, err = envMaxCalls.parse(get(EnvMaxCalls))
	c.MaxCalls = int(n)
	errs = append(errs, err)
	c.EgressAllow, err = parseEgressAllow(get(EnvEgressAllow))
	errs = append(errs, err)
	c.Outbox, err = loadOutboxSettings(get)
	errs = append(errs, err)
	return c, errors.Join(errs...)
}

func parseEgressAllow(v string) (EgressAllowList, error) {
	var l EgressAllowList
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			l.Prefixes = append(l.Prefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(item); err == nil {
			l.Prefixes = append(l.Prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		if !validHostName(item) {
			return EgressAllowList{}, &ConfigError{Name: EnvEgressAllow, Value: v,
				Accept: fmt.Sprintf("a comma-separated list of CIDRs, IP addresses and host names (%q is none of these)", item)}
		}
		l.Hosts = append(l.Hosts, strings.ToLower(item))
	}
	return l, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

func validHostName(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// DatabaseLocation is a parsed SWITCHBOARD_DATABASE_URL.
type DatabaseLocation struct {
	Driver string // "sqlite"
	Path   string // file path for sqlite
}

// ParseDatabaseURL accepts "sqlite:PATH", "sqlite://PATH", "file:PATH" and plain paths.
// PostgreSQL URLs are recognised and refused until the PostgreSQL store lands.
func ParseDatabaseURL(v string) (DatabaseLocation, error) {
	bad := func(why string) error {
		return &ConfigError{Name: EnvDatabaseURL, Value: v, Accept: why}
	}
	switch {
	case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
		return DatabaseLocation{}, bad("a SQLite location (sqlite:PATH); PostgreSQL is not supported by this build yet")
	case strings.HasPrefix(v, "sqlite://"):
		v = strings.TrimPrefix(v, "sqlite://")
	case strings.HasPrefix(v, "sqlite:"):
		v = strings.TrimPrefix(v, "sqlite:")
	case strings.HasPrefix(v, "file:"):
		v = strings.TrimPrefix(v, "file:")
	case strings.Contains(v, "://"):
		return DatabaseLocation{}, bad("sqlite:PATH or a file path")
	}
	if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "?\x00") {
		return DatabaseLocation{}, bad("sqlite:PATH with a non-empty file path and no query string")
	}
	return DatabaseLocation{Driver: "sqlite", Path: v}, nil
}

// Printable returns the effective configuration as name/value pairs in a stable order,
// secrets masked, for `serve --print-config`.
func (c Config) Printable() [][2]string {
	mask := func(s string) string {
		if s == "" {
			return ""
		}
		return "********"
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	cc := c.CallControl
	return [][2]string{
		{EnvListen, c.Listen},
		{EnvDatabaseURL, c.DatabaseURL},
		{EnvLogLevel, c.LogLevel.String()},
		{EnvDrainTimeout, ms(c.DrainTimeout)},
		{EnvEgressAllow, c.EgressAllow.String()},
		{EnvEgressDeny, strings.Join(c.Outbox.EgressDeny, ",")},
		{EnvSMTPURL, mask(c.Outbox.SMTPURL)},
		{EnvAdminToken, mask(c.AdminToken)},
		{EnvCallIdle, ms(c.CallIdleTimeout)},
		{EnvMaxCalls, strconv.Itoa(c.MaxCalls)},
		{envHTTPTimeout.name, ms(cc.HTTPTimeout)},
		{envUserAgent, cc.UserAgent},
		{envWSHandshakeTimeout.name, ms(cc.WSHandshakeTimeout)},
		{envWSAckTimeout.name, ms(cc.WSAckTimeout)},
		{envWSMaxPayload.name, strconv.FormatInt(cc.WSMaxPayload, 10)},
		{envWSPingInterval.name, ms(cc.WSPingInterval)},
		{envWebhookErrorReturn.name, strconv.Itoa(cc.WebhookErrorReturn)},
	}
}
