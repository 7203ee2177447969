package featureserver

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// The JAMBONES_* variables of docs/call-control.md §7, with their accepted ranges. The upper
// bounds reject values that can only be mistakes (a ten-minute handshake timeout).
var (
	envHTTPTimeout        = intSetting{"JAMBONES_HTTP_TIMEOUT", 1, 600_000, "milliseconds"}
	envWSHandshakeTimeout = intSetting{"JAMBONES_WS_HANDSHAKE_TIMEOUT_MS", 1, 120_000, "milliseconds"}
	envWSAckTimeout       = intSetting{"JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT", 1, 600_000, "milliseconds"}
	envWSMaxPayload       = intSetting{"JAMBONES_WS_MAX_PAYLOAD", 1024, 16 << 20, "bytes"}
	envWSPingInterval     = intSetting{"JAMBONES_WS_PING_INTERVAL_MS", 0, 3_600_000, "milliseconds"}
	envWebhookErrorReturn = intSetting{"JAMBONES_WEBHOOK_ERROR_RETURN", 400, 699, ""}
)

const envUserAgent = "JAMBONES_HTTP_USER_AGENT_HEADER"

// CallControlConfig is the call-control part of a node's configuration (the
// JAMBONES_* variables of docs/call-control.md §7). Zero values take the defaults
// documented per field (WithDefaults).
type CallControlConfig struct {
	// HTTPTimeout bounds connect + response headers of an HTTP hook. Default 10 s.
	HTTPTimeout time.Duration
	// UserAgent is sent on hooks and WebSocket upgrades. Default "jambonz".
	UserAgent string
	// WSHandshakeTimeout bounds a WebSocket opening handshake. Default 1.5 s.
	WSHandshakeTimeout time.Duration
	// WSAckTimeout is how long a message waits for its ack. Default 5 s.
	WSAckTimeout time.Duration
	// WSMaxPayload is the largest inbound WebSocket message in bytes. Default 24576.
	WSMaxPayload int64
	// WSPingInterval is the keepalive ping interval; 0 (default) turns pings off.
	WSPingInterval time.Duration
	// WebhookErrorReturn is the SIP status of a call rejected because its initial
	// hook failed. Default 480.
	WebhookErrorReturn int
	// IdleConnsPerHost is how many idle connections to an application host the
	// hook client keeps for reuse; not a variable: a run of many calls at once
	// (simulate --concurrency) sizes it to them. Default: the hook client's
	// (transport.HookClientOptions.MaxIdleConnsPerHost, 4).
	IdleConnsPerHost int
}

// WithDefaults returns c with every zero value replaced by its default.
func (c CallControlConfig) WithDefaults() CallControlConfig {
	if c.UserAgent == "" {
		c.UserAgent = "jambonz"
	}
	setDefault(&c.HTTPTimeout, 10*time.Second)
	setDefault(&c.WSHandshakeTimeout, 1500*time.Millisecond)
	setDefault(&c.WSAckTimeout, 5*time.Second)
	setDefault(&c.WSMaxPayload, 24576)
	setDefault(&c.WebhookErrorReturn, 480)
	return c
}

// validate reports every value out of range at once, each as a *ConfigError naming
// its field.
func (c CallControlConfig) validate() error {
	errs := []error{
		envHTTPTimeout.checkDuration("CallControlConfig.HTTPTimeout", c.HTTPTimeout),
		envWSHandshakeTimeout.checkDuration("CallControlConfig.WSHandshakeTimeout", c.WSHandshakeTimeout),
		envWSAckTimeout.checkDuration("CallControlConfig.WSAckTimeout", c.WSAckTimeout),
		envWSMaxPayload.check("CallControlConfig.WSMaxPayload", c.WSMaxPayload),
		envWSPingInterval.checkDuration("CallControlConfig.WSPingInterval", c.WSPingInterval),
		envWebhookErrorReturn.check("CallControlConfig.WebhookErrorReturn", int64(c.WebhookErrorReturn)),
	}
	if err := checkUserAgent(c.UserAgent); err != nil {
		err.Name = "CallControlConfig.UserAgent"
		errs = append(errs, err)
	}
	if c.IdleConnsPerHost < 0 {
		errs = append(errs, &ConfigError{Name: "CallControlConfig.IdleConnsPerHost", Value: strconv.Itoa(c.IdleConnsPerHost), Accept: "0 (the default) or more"})
	}
	return errors.Join(errs...)
}

// checkUserAgent accepts a non-empty header value on one line.
func checkUserAgent(ua string) *ConfigError {
	if strings.TrimSpace(ua) == "" || strings.ContainsAny(ua, "\r\n") {
		return &ConfigError{Name: envUserAgent, Value: ua, Accept: "a non-empty header value on one line"}
	}
	return nil
}

// LoadCallControlConfig reads the JAMBONES_* variables through getenv; what is unset
// takes its default. Every bad value is reported (joined), each a *ConfigError naming
// its variable and accepted range.
func LoadCallControlConfig(getenv func(string) string) (CallControlConfig, error) {
	var errs []error
	ms := func(s intSetting) time.Duration {
		d, err := s.duration(getenv(s.name))
		errs = append(errs, err)
		return d
	}
	num := func(s intSetting) int64 {
		n, err := s.parse(getenv(s.name))
		errs = append(errs, err)
		return n
	}
	c := CallControlConfig{
		HTTPTimeout:        ms(envHTTPTimeout),
		WSHandshakeTimeout: ms(envWSHandshakeTimeout),
		WSAckTimeout:       ms(envWSAckTimeout),
		WSMaxPayload:       num(envWSMaxPayload),
		WSPingInterval:     ms(envWSPingInterval),
		WebhookErrorReturn: int(num(envWebhookErrorReturn)),
	}
	if ua, ok := lookup(getenv, envUserAgent); ok {
		if err := checkUserAgent(ua); err != nil {
			errs = append(errs, err)
		} else {
			c.UserAgent = ua
		}
	}
	if err := errors.Join(errs...); err != nil {
		return CallControlConfig{}, err
	}
	return c.WithDefaults(), nil
}

// lookup treats an empty value as unset, as shells commonly export VAR= to clear it.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// CallNetwork is what every call of a node, or of one `switchboard simulate` run,
// shares: the HTTP hook client and the WebSocket egress client, built from the
// JAMBONES_* settings under one set of egress rules, so that connections to an
// application are pooled across its calls. It is safe for concurrent use.
type CallNetwork struct {
	cfg   CallControlConfig
	rules transport.EgressRules
	log   zerolog.Logger
	hooks *transport.HookClient
	ws    *http.Client
}

// NewCallNetwork builds the clients of cfg under rules; log receives their lines and
// those of the calls.
func NewCallNetwork(cfg CallControlConfig, rules transport.EgressRules, log zerolog.Logger) *CallNetwork {
	return newCallNetwork(cfg, rules, log, nil)
}

// newCallNetwork is NewCallNetwork whose hook attempts are traced with tp, when set.
func newCallNetwork(cfg CallControlConfig, rules transport.EgressRules, log zerolog.Logger, tp trace.TracerProvider) *CallNetwork {
	return &CallNetwork{
		cfg: cfg, rules: rules, log: log,
		// Each call's retry delays pass on its own clock (transport.HookRequest.Sleep).
		hooks: transport.NewHookClient(transport.HookClientOptions{
			Rules: rules, Timeout: cfg.HTTPTimeout, UserAgent: cfg.UserAgent, Logger: log,
			MaxIdleConnsPerHost: cfg.IdleConnsPerHost, TracerProvider: tp,
		}),
		// Upgrades are never pooled: every WebSocket attempt opens a connection of
		// its own (docs/call-control.md §4).
		ws: transport.NewHTTPClient(rules, transport.ClientOptions{ConnectTimeout: cfg.WSHandshakeTimeout, DisableKeepAlives: true}),
	}
}

// CallOptions returns the Options of a call to appURL through n: the hook client,
// the WebSocket options, the egress rules, the ack timeout, the SIP status of a call
// whose call hook failed, and the logger. The caller adds what is the call's own
// (credentials, description, script, status hook, idle limit, events).
func (n *CallNetwork) CallOptions(appURL string) callctl.Options {
	return callctl.Options{
		AppURL: appURL,
		Hooks:  n.hooks,
		WebSocket: wsclient.Options{
			HTTPClient:       n.ws,
			HandshakeTimeout: n.cfg.WSHandshakeTimeout,
			MaxPayload:       int(n.cfg.WSMaxPayload),
			PingInterval:     n.cfg.WSPingInterval,
			UserAgent:        n.cfg.UserAgent,
		},
		EgressRules:        n.rules,
		AckTimeout:         n.cfg.WSAckTimeout,
		WebhookErrorReturn: n.cfg.WebhookErrorReturn,
		Logger:             n.log,
	}
}

// CloseIdleConnections closes the pooled connections, once the calls are over.
func (n *CallNetwork) CloseIdleConnections() {
	n.hooks.CloseIdleConnections()
	n.ws.CloseIdleConnections()
}
