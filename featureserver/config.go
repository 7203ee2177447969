package featureserver

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/dburl"
	"github.com/switchboard-voice/switchboard/internal/secretbox"
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
	// EnvTrustedProxies lists the proxies (CIDRs) whose X-Forwarded-For names the
	// client, for the limits on failed authentication.
	EnvTrustedProxies = "SWITCHBOARD_TRUSTED_PROXIES"
	// EnvSecretsKey holds the keys that encrypt the secrets the node stores.
	EnvSecretsKey = "SWITCHBOARD_SECRETS_KEY"
	EnvCallIdle   = "SWITCHBOARD_CALL_IDLE_TIMEOUT_MS"
	EnvMaxCalls   = "SWITCHBOARD_MAX_CALLS"
	EnvRetention  = "SWITCHBOARD_CALL_RETENTION_HOURS"
	// The limits of one call (docs/call-control.md §4b).
	EnvMaxCallDuration = "SWITCHBOARD_MAX_CALL_DURATION_MS"
	EnvMaxCallRequests = "SWITCHBOARD_MAX_CALL_REQUESTS"
	EnvMaxCallEvents   = "SWITCHBOARD_MAX_CALL_EVENTS"
)

// Defaults of the node's own settings.
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultDatabaseURL = "sqlite:switchboard.db"
)

var (
	envDrainTimeout = intSetting{EnvDrainTimeout, 0, 3_600_000, "milliseconds"}
	envCallIdle     = intSetting{EnvCallIdle, 1000, 86_400_000, "milliseconds"}
	envMaxCalls     = intSetting{EnvMaxCalls, 1, 1_000_000, ""}
	envRetention    = intSetting{EnvRetention, 1, 87_600, "hours"}
	// At most 24 h, a million requests and a million events: beyond, a limit only
	// lets a runaway call cost more.
	envMaxCallDuration = intSetting{EnvMaxCallDuration, 1000, 86_400_000, "milliseconds"}
	envMaxCallRequests = intSetting{EnvMaxCallRequests, 10, 1_000_000, ""}
	envMaxCallEvents   = intSetting{EnvMaxCallEvents, 100, 1_000_000, ""}
)

// Config is a node's whole configuration: LoadConfig reads it from the environment
// and flags; a program that builds one in Go leaves at zero what should take its
// default (WithDefaults), and NewNode refuses values out of range.
type Config struct {
	// Listen is the API's address, host:port. Default DefaultListen, 127.0.0.1:8080.
	Listen string
	// DatabaseURL locates the node's database: "sqlite:PATH" or a plain file path,
	// or "postgres://..." for a database that several nodes share (docs/outbox.md §5).
	// Default DefaultDatabaseURL, sqlite:switchboard.db.
	DatabaseURL string
	// LogLevel is the level of the logger `switchboard serve` builds (the node logs
	// through NodeOptions.Logger). LoadConfig's default is info; WithDefaults leaves
	// it, zerolog's zero level being debug.
	LogLevel zerolog.Level
	// DrainTimeout is how long a drain (Run's context ending: SIGTERM) lets active
	// calls finish before it ends them. Default 30 s. A negative value ends them at
	// once: what SWITCHBOARD_DRAIN_TIMEOUT_MS=0 sets.
	DrainTimeout time.Duration
	// EgressAllow lists CIDRs and host names that hooks (call-control URLs) may reach
	// even when the call-control egress rules would refuse them (loopback,
	// link-local). Webhook endpoints have their own, Outbox.EgressAllow. Default none.
	EgressAllow EgressAllowList
	// AdminToken, when set, may create accounts through the API: at least 32
	// characters, and none of the examples the documentation shows. Secret. Default
	// none: account creation through the API is disabled.
	AdminToken string
	// SecretsKey, when set, encrypts every secret the node stores (webhook secrets,
	// endpoint signing keys, hook passwords) with AES-256-GCM: a comma-separated list
	// of keys, each the base64 of 32 bytes (openssl rand -base64 32), the first
	// encrypting and every one decrypting, so that a key is rotated by putting a new
	// one first and running `switchboard secrets rotate` (docs/security.md §5).
	// Secret. Default none: secrets are stored in clear.
	SecretsKey string
	// TrustedProxies are the proxies (load balancers) in front of the node: for a
	// request from one of them, the client whose failed authentications are
	// counted is the last address of X-Forwarded-For outside them. Default none:
	// the connection's peer is the client.
	TrustedProxies []netip.Prefix
	// CallIdleTimeout ends a WebSocket call whose verbs ran out and that has heard
	// nothing for this long. Default 5 minutes.
	CallIdleTimeout time.Duration
	// MaxCalls caps concurrent calls; more are refused with 503. Default 10000.
	MaxCalls int
	// CallRetention is how long the records of ended calls are kept: older ones are
	// purged in bounded batches while the node runs. Default 7 days; whole hours, at
	// most 10 years.
	CallRetention time.Duration
	// MaxCallDuration ends a call that lasted this long, on the wall clock (reason
	// max-duration). Default 4 h.
	MaxCallDuration time.Duration
	// MaxCallRequests ends a call that sent its application this many requests
	// (reason max-requests: an application redirecting to itself). Default 1000.
	MaxCallRequests int
	// MaxCallEvents ends a call whose timeline holds this many events (reason
	// max-events), bounding its record. Default 5000.
	MaxCallEvents int
	// CallControl holds the JAMBONES_* settings, each with its default.
	CallControl CallControlConfig
	// Outbox holds the webhook outbox's settings (egress deny-list, SMTP). Default
	// none of either.
	Outbox OutboxSettings
	// Cluster holds the node's settings among nodes sharing a PostgreSQL database:
	// its id, URL and lease. Defaults per field.
	Cluster ClusterSettings
}

// WithDefaults returns c with every zero value replaced by its default.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	setDefault(&c.DrainTimeout, 30*time.Second)
	setDefault(&c.CallIdleTimeout, 5*time.Minute)
	setDefault(&c.MaxCalls, 10_000)
	setDefault(&c.CallRetention, 7*24*time.Hour)
	setDefault(&c.MaxCallDuration, 4*time.Hour)
	setDefault(&c.MaxCallRequests, 1000)
	setDefault(&c.MaxCallEvents, 5000)
	c.CallControl = c.CallControl.WithDefaults()
	c.Cluster = c.Cluster.WithDefaults()
	setDefault(&c.Outbox.LeaseDuration, 2*time.Minute) // outbox.Config's default
	return c
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// validate reports every value out of range at once, each as a *ConfigError naming
// its field.
func (c Config) validate() error {
	var errs []error
	if err := checkListen(c.Listen); err != nil {
		errs = append(errs, &ConfigError{Name: "Config.Listen", Value: c.Listen, Accept: err.Accept})
	}
	if _, err := parseDatabaseURL(c.DatabaseURL); err != nil {
		var ce *ConfigError
		errors.As(err, &ce)
		errs = append(errs, &ConfigError{Name: "Config.DatabaseURL", Value: ce.Value, Accept: ce.Accept})
	}
	if c.DrainTimeout > 0 {
		errs = append(errs, envDrainTimeout.checkDuration("Config.DrainTimeout", c.DrainTimeout))
	}
	errs = append(errs,
		envCallIdle.checkDuration("Config.CallIdleTimeout", c.CallIdleTimeout),
		envMaxCalls.check("Config.MaxCalls", int64(c.MaxCalls)),
		envMaxCallDuration.checkDuration("Config.MaxCallDuration", c.MaxCallDuration),
		envMaxCallRequests.check("Config.MaxCallRequests", int64(c.MaxCallRequests)),
		envMaxCallEvents.check("Config.MaxCallEvents", int64(c.MaxCallEvents)))
	if c.CallRetention < time.Hour || c.CallRetention > time.Duration(envRetention.max)*time.Hour {
		errs = append(errs, &ConfigError{Name: "Config.CallRetention", Value: c.CallRetention.String(),
			Accept: fmt.Sprintf("a duration in [1h, %dh] (as %s)", envRetention.max, EnvRetention)})
	}
	if err := checkAdminToken("Config.AdminToken", c.AdminToken); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseSecretsKey("Config.SecretsKey", c.SecretsKey); err != nil {
		errs = append(errs, err)
	}
	for _, p := range c.TrustedProxies {
		if !p.IsValid() {
			errs = append(errs, &ConfigError{Name: "Config.TrustedProxies", Value: p.String(), Accept: "valid CIDR prefixes"})
		}
	}
	errs = append(errs, c.EgressAllow.validate("Config.EgressAllow"))
	errs = append(errs, c.CallControl.validate(), c.Outbox.validate(), c.Cluster.validate("Config.Cluster.NodeID", "Config.Cluster.NodeURL"))
	return errors.Join(errs...)
}

// EgressAllowList is a parsed SWITCHBOARD_EGRESS_ALLOW.
type EgressAllowList struct {
	Prefixes []netip.Prefix
	Hosts    []string
}

// validate reports the bad entries of a list built in Go, field naming it.
func (l EgressAllowList) validate(field string) error {
	var errs []error
	for _, h := range l.Hosts {
		if !validHostName(h) {
			errs = append(errs, &ConfigError{Name: field + ".Hosts", Value: h, Accept: "host names"})
		}
	}
	for _, p := range l.Prefixes {
		if !p.IsValid() {
			errs = append(errs, &ConfigError{Name: field + ".Prefixes", Value: p.String(), Accept: "valid CIDR prefixes"})
		}
	}
	return errors.Join(errs...)
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
// which map a variable name to the value of its flag and win over the environment;
// what is set neither way takes its default. All bad values are reported together,
// each a *ConfigError naming its variable and accepted range.
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
	c := Config{LogLevel: zerolog.InfoLevel, AdminToken: get(EnvAdminToken), CallControl: cc}
	if v := get(EnvListen); v != "" {
		if err := checkListen(v); err != nil {
			err.Name, err.Value = EnvListen, v
			errs = append(errs, err)
		} else {
			c.Listen = v
		}
	}
	if v := get(EnvDatabaseURL); v != "" {
		if _, err := parseDatabaseURL(v); err != nil {
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
	if err := checkAdminToken(EnvAdminToken, c.AdminToken); err != nil {
		errs = append(errs, err)
	}
	c.SecretsKey = get(EnvSecretsKey)
	if _, err := parseSecretsKey(EnvSecretsKey, c.SecretsKey); err != nil {
		errs = append(errs, err)
	}
	if c.TrustedProxies, err = parsePrefixes(EnvTrustedProxies, get(EnvTrustedProxies)); err != nil {
		errs = append(errs, err)
	}
	var n int64
	c.DrainTimeout, err = envDrainTimeout.duration(get(EnvDrainTimeout))
	errs = append(errs, err)
	if err == nil && c.DrainTimeout == 0 && get(EnvDrainTimeout) != "" {
		c.DrainTimeout = -1 // 0 set on purpose: no wait (Config.DrainTimeout)
	}
	c.CallIdleTimeout, err = envCallIdle.duration(get(EnvCallIdle))
	errs = append(errs, err)
	n, err = envMaxCalls.parse(get(EnvMaxCalls))
	c.MaxCalls = int(n)
	errs = append(errs, err)
	c.MaxCallDuration, err = envMaxCallDuration.duration(get(EnvMaxCallDuration))
	errs = append(errs, err)
	n, err = envMaxCallRequests.parse(get(EnvMaxCallRequests))
	c.MaxCallRequests = int(n)
	errs = append(errs, err)
	n, err = envMaxCallEvents.parse(get(EnvMaxCallEvents))
	c.MaxCallEvents = int(n)
	errs = append(errs, err)
	n, err = envRetention.parse(get(EnvRetention))
	c.CallRetention = time.Duration(n) * time.Hour
	errs = append(errs, err)
	c.EgressAllow, err = parseEgressAllow(EnvEgressAllow, get(EnvEgressAllow))
	errs = append(errs, err)
	c.Outbox, err = loadOutboxSettings(get)
	errs = append(errs, err)
	c.Cluster, err = loadClusterSettings(get)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c.WithDefaults(), nil
}

// minAdminTokenLength keeps the token that creates accounts out of reach of
// guessing, limits on failures or not.
const minAdminTokenLength = 32

// exampleAdminTokens are admin tokens the documentation shows: a node started with
// one copied as it is would be open to anyone who read the same page.
var exampleAdminTokens = []string{"change-me-admin-token", "change-me-to-a-long-random-token", "change-me", "changeme", "admin", "secret"}

// checkAdminToken refuses a set admin token shorter than minAdminTokenLength or
// equal to a documented example, naming the variable (or field) name.
func checkAdminToken(name, token string) error {
	if token == "" {
		return nil
	}
	for _, ex := range exampleAdminTokens {
		if strings.EqualFold(token, ex) {
			return &ConfigError{Name: name, Value: "(hidden)", Accept: "a token of your own: this one is an example from the documentation (make one with: openssl rand -base64 32)"}
		}
	}
	if len(token) < minAdminTokenLength {
		return &ConfigError{Name: name, Value: "(hidden)", Accept: fmt.Sprintf("at least %d characters (make one with: openssl rand -base64 32)", minAdminTokenLength)}
	}
	return nil
}

// parseSecretsKey parses the keys of a SecretsKey, the value v of variable (or
// field) name; none is a nil Keyring. Its error never shows a key.
func parseSecretsKey(name, v string) (*secretbox.Keyring, error) {
	k, err := secretbox.Parse(v)
	if err != nil {
		return nil, &ConfigError{Name: name, Value: "(hidden)", Accept: "a comma-separated list of keys, each the base64 of 32 bytes, the first encrypting: " + err.Error()}
	}
	return k, nil
}

// parsePrefixes parses a comma-separated list of CIDRs and addresses, the value v
// of variable name.
func parsePrefixes(name, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, &ConfigError{Name: name, Value: v, Accept: fmt.Sprintf("a comma-separated list of CIDRs and IP addresses (%q is neither)", item)}
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// checkListen accepts host:port with a port in [0, 65535].
func checkListen(v string) *ConfigError {
	if _, port, err := net.SplitHostPort(v); err != nil || !validPort(port) {
		return &ConfigError{Name: EnvListen, Value: v, Accept: "host:port with a port in [0, 65535], e.g. 127.0.0.1:8080 or :8080"}
	}
	return nil
}

// parseEgressAllow parses an allow-list variable, name, of value v.
func parseEgressAllow(name, v string) (EgressAllowList, error) {
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
			return EgressAllowList{}, &ConfigError{Name: name, Value: v,
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

// parseDatabaseURL parses a SWITCHBOARD_DATABASE_URL (internal/dburl): sqlite:PATH,
// sqlite://PATH, file:PATH, a plain path, or postgres://... (postgresql://...).
func parseDatabaseURL(v string) (dburl.Location, error) {
	loc, err := dburl.Parse(v)
	if err != nil {
		var de *dburl.Error
		accept := "sqlite:PATH, a file path, or postgres://..."
		if errors.As(err, &de) {
			// ConfigError says "want ...": a reason that says what is wanted
			// replaces accept, any other is added to it.
			if rest, ok := strings.CutPrefix(de.Reason, "want "); ok {
				accept = rest
			} else {
				accept += " (" + de.Reason + ")"
			}
		}
		return dburl.Location{}, &ConfigError{Name: EnvDatabaseURL, Value: dburl.Redact(v), Accept: accept}
	}
	return loc, nil
}

// secretsAtRest says, for --print-config, how secrets are stored: never the keys.
func secretsAtRest(v string) string {
	k, err := secretbox.Parse(v)
	switch {
	case err != nil:
		return "(invalid)"
	case !k.Enabled():
		return "(not set: secrets are stored in clear)"
	case k.Keys() == 1:
		return "******** (1 key: secrets are stored encrypted)"
	default:
		return fmt.Sprintf("******** (%d keys, the first encrypting: secrets are stored encrypted)", k.Keys())
	}
}

// prefixList writes prefixes as their variable takes them.
func prefixList(ps []netip.Prefix) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
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
	// A negative drain timeout (no wait) is written 0, as it is set.
	ms := func(d time.Duration) string { return strconv.FormatInt(max(d, 0).Milliseconds(), 10) }
	cc := c.CallControl
	return [][2]string{
		{EnvListen, c.Listen},
		{EnvDatabaseURL, dburl.Redact(c.DatabaseURL)},
		{EnvLogLevel, c.LogLevel.String()},
		{EnvDrainTimeout, ms(c.DrainTimeout)},
		{EnvEgressAllow, c.EgressAllow.String()},
		{EnvOutboxEgressAllow, c.Outbox.EgressAllow.String()},
		{EnvEgressDeny, strings.Join(c.Outbox.EgressDeny, ",")},
		{EnvSMTPURL, mask(c.Outbox.SMTPURL)},
		{EnvOutboxLease, ms(c.Outbox.LeaseDuration)},
		{EnvEgressProxy, redactProxy(c.Outbox.EgressProxy)},
		{EnvAdminToken, mask(c.AdminToken)},
		{EnvSecretsKey, secretsAtRest(c.SecretsKey)},
		{EnvTrustedProxies, prefixList(c.TrustedProxies)},
		{EnvCallIdle, ms(c.CallIdleTimeout)},
		{EnvMaxCalls, strconv.Itoa(c.MaxCalls)},
		{EnvRetention, strconv.FormatInt(int64(c.CallRetention/time.Hour), 10)},
		{EnvMaxCallDuration, ms(c.MaxCallDuration)},
		{EnvMaxCallRequests, strconv.Itoa(c.MaxCallRequests)},
		{EnvMaxCallEvents, strconv.Itoa(c.MaxCallEvents)},
		{EnvNodeID, c.Cluster.NodeID},
		{EnvNodeURL, cmp.Or(c.Cluster.NodeURL, "(http:// and the bound listen address)")},
		{EnvNodeLease, ms(c.Cluster.Lease)},
		{envHTTPTimeout.name, ms(cc.HTTPTimeout)},
		{envUserAgent, cc.UserAgent},
		{envWSHandshakeTimeout.name, ms(cc.WSHandshakeTimeout)},
		{envWSAckTimeout.name, ms(cc.WSAckTimeout)},
		{envWSMaxPayload.name, strconv.FormatInt(cc.WSMaxPayload, 10)},
		{envWSPingInterval.name, ms(cc.WSPingInterval)},
		{envWebhookErrorReturn.name, strconv.Itoa(cc.WebhookErrorReturn)},
	}
}

// redactProxy is a proxy URL with its password hidden.
func redactProxy(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "********"
	}
	return u.Redacted()
}
