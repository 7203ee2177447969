package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Subprotocol is the WebSocket subprotocol every jambonz application speaks.
const Subprotocol = "ws.jambonz.org"

// Defaults of Options (docs/call-control.md §7).
const (
	DefaultHandshakeTimeout = 1500 * time.Millisecond
	DefaultMaxPayload       = 24576
	DefaultUserAgent        = "jambonz"
	// HardCapFactor × MaxPayload is the largest message read (and discarded) before
	// the connection is closed with 1009: past it the peer is abusive, not mistaken.
	HardCapFactor = 64
	// MaxMaxPayload bounds MaxPayload so the hard cap stays reasonable.
	MaxMaxPayload = 64 << 20
)

// Options configure Dial and NewReconnector. Zero values take the defaults stated on
// each field.
type Options struct {
	// HTTPClient carries the opening handshake. It should be the egress client
	// (transport.NewHTTPClient) so WebSocket dials obey the same rules as hooks,
	// with DisableKeepAlives: every attempt opens a connection of its own, as
	// jambonz's do (docs/call-control.md §4). A connection whose upgrade failed is
	// closed whatever the client, so that it never carries another request (an SDK
	// app that answered 404 to an upgrade reads nothing more on it). Redirects are
	// never followed, whatever its CheckRedirect says. Default: an egress client
	// with transport.CallControlRules(false) (loopback refused), keep-alives off, a
	// new one each time WithDefaults fills it in (nothing is pooled that sharing would
	// save).
	HTTPClient *http.Client
	// HandshakeTimeout bounds each opening handshake, TCP connect included
	// (JAMBONES_WS_HANDSHAKE_TIMEOUT_MS). Default 1500 ms.
	HandshakeTimeout time.Duration
	// MaxPayload is the largest inbound message in bytes (JAMBONES_WS_MAX_PAYLOAD).
	// Larger messages are discarded with ErrMessageTooLarge. Default 24576, at most
	// MaxMaxPayload.
	MaxPayload int
	// PingInterval is the keepalive period (JAMBONES_WS_PING_INTERVAL_MS); two
	// missed pongs in a row drop the connection. Default 0: no pings.
	PingInterval time.Duration
	// UserAgent is sent on the upgrade request (JAMBONES_HTTP_USER_AGENT_HEADER).
	// Default "jambonz".
	UserAgent string
	// Header is added to the upgrade request (e.g. Authorization for Basic auth).
	// The WebSocket handshake headers are always ours.
	Header http.Header
	// Sleep waits between attempts and returns early with ctx.Err(). Default: a
	// timer. Tests inject one that records the delays.
	Sleep func(ctx context.Context, d time.Duration) error
	// Clock stamps attempts. Default retry.SystemClock.
	Clock retry.Clock
	// Observer, when set, is called after every attempt, in order, from the dialing
	// goroutine.
	Observer func(Attempt)
	// Classify maps an attempt's network error to its class. Default
	// transport.Classify. Statuses, timeouts and the subprotocol are classified here
	// before it is consulted.
	Classify func(error) retry.Class
	// Logger receives one debug line per attempt and one warning per give-up.
	// The zero value logs nothing.
	Logger zerolog.Logger
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Sleep == nil {
		o.Sleep = transport.Sleep
	}
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.Classify == nil {
		o.Classify = transport.Classify
	}
	if o.HTTPClient == nil {
		o.HTTPClient = transport.NewHTTPClient(transport.CallControlRules(false), transport.ClientOptions{DisableKeepAlives: true})
	}
	return o
}

// validate reports every value out of range at once, each wrapping
// ErrInvalidOptions.
func (o Options) validate() error {
	var errs []error
	if o.HandshakeTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: HandshakeTimeout %v is negative", ErrInvalidOptions, o.HandshakeTimeout))
	}
	if o.MaxPayload < 0 || o.MaxPayload > MaxMaxPayload {
		errs = append(errs, fmt.Errorf("%w: MaxPayload %d is outside 0..%d", ErrInvalidOptions, o.MaxPayload, MaxMaxPayload))
	}
	if o.PingInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: PingInterval %v is negative", ErrInvalidOptions, o.PingInterval))
	}
	return errors.Join(errs...)
}

// prepared is o, checked, with its defaults and a client that never follows a
// redirect: what Dial and NewReconnector run with. ownClient reports whether the
// HTTP client is the default one made here (and so may have its idle connections
// closed).
func (o Options) prepared() (_ Options, ownClient bool, _ error) {
	ownClient = o.HTTPClient == nil
	o = o.WithDefaults()
	if err := o.validate(); err != nil {
		return o, false, err
	}
	// A copy, so the caller's client keeps its own redirect policy: an upgrade
	// answered with a 3xx is a failure (class redirect), never followed.
	c := *o.HTTPClient
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.HTTPClient = &c
	return o, ownClient, nil
}
