package callctl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// ErrInvalidOptions is wrapped by the error Run returns for Options that cannot run a
// call; nothing is sent then.
var ErrInvalidOptions = errors.New("callctl: invalid options")

// HookRequester sends one HTTP hook with the retries of its target's policy.
// *transport.HookClient implements it, and one client serves many calls: each
// request carries the call's own Sleep (HookRequest.Sleep), so that its retry delays
// pass on that call's clock.
type HookRequester interface {
	Do(ctx context.Context, hr transport.HookRequest) (*transport.HookResponse, error)
}

// StatusNotifier takes over the status notifications of an HTTP application: a node
// hands them to its outbox for durable, asynchronous delivery (CALL-CONTROL.md §8).
// NotifyStatus must not block on the network.
type StatusNotifier interface {
	NotifyStatus(ctx context.Context, statusHook fragment.Target, payload map[string]any)
}

// Options describe one call. Zero values take the defaults stated on each field.
type Options struct {
	// AppURL is the application: http(s) for webhooks, ws(s) for a WebSocket, with
	// an optional retry fragment (#rc=..&rp=..). Required.
	AppURL string
	// StatusHookURL receives call:status notifications of an HTTP application
	// (absolute, or relative to AppURL). Optional; unused for WebSocket apps.
	StatusHookURL string
	// StatusNotifier, when set, receives the status notifications for
	// StatusHookURL instead of the call sending them itself.
	// StatusHookMethod is POST (default) or GET; StatusHookUsername and
	// StatusHookPassword authenticate the status hook (its own credentials: the call
	// hook's are never sent to it).
	StatusHookMethod                       string
	StatusHookUsername, StatusHookPassword string
	StatusNotifier                         StatusNotifier
	// Method of the call hook: POST (default) or GET.
	Method string
	// Username and Password, when set, authenticate hooks (HTTP Basic auth).
	Username, Password string
	// Secret, when set, signs every HTTP hook (Jambonz-Signature).
	Secret string

	// Call describes the inbound call. CallSid, CallID, TraceID, AccountSid and
	// ApplicationSid are generated when empty; From defaults to "+15551230000" and
	// To to "+15559870000"; Direction is "inbound".
	Call CallInfo
	// Script is what the caller and the network do.
	Script Script

	// Hooks sends HTTP hooks. Required for HTTP applications.
	Hooks HookRequester
	// WebSocket configures the application's connection (HTTPClient should be the
	// shared egress client; HandshakeTimeout, MaxPayload, PingInterval, UserAgent).
	// Sleep, Observer and Clock are set by the call.
	WebSocket wsclient.Options

	// EgressRules are the rules of the call's own WebSocket transport, used only
	// when a Script fault drops the TCP connection without a close frame. Default
	// transport.CallControlRules(false).
	EgressRules transport.EgressRules

	// AckTimeout is how long a WebSocket message waits for its ack
	// (JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT). Default 5 s.
	AckTimeout time.Duration
	// WebhookErrorReturn is the SIP status of a call rejected because its initial
	// HTTP hook failed (JAMBONES_WEBHOOK_ERROR_RETURN). Default 480.
	WebhookErrorReturn int
	// IdleLimit is how long (real time) a WebSocket call whose verbs ran out waits
	// for a command before the node ends it. Default 30 s.
	IdleLimit time.Duration
	// MaxDuration caps a call's simulated length (a "say" looping forever). Default 4 h.
	MaxDuration time.Duration

	// Clock is the real clock a call's simulated time runs on: a call's time is the
	// real time elapsed on Clock plus the simulated time of media and retry delays.
	// Waits for the network (ack timeouts, IdleLimit) are real time whatever Clock
	// says. Default retry.SystemClock{}.
	Clock retry.Clock
	// Logger receives structured logs of the call. Default: disabled.
	Logger zerolog.Logger
	// OnEvent, when set, receives each timeline event as it is recorded, from the
	// call's goroutine.
	OnEvent func(Event)
	// Control, when set, carries live-call commands from outside the call (a node's
	// REST API). They are applied between verbs and while the call waits for a
	// WebSocket application's command.
	Control <-chan Control
}

// Defaults of Options.
const (
	DefaultAckTimeout         = 5 * time.Second
	DefaultWebhookErrorReturn = 480
	DefaultIdleLimit          = 30 * time.Second
	DefaultMaxDuration        = 4 * time.Hour
	defaultFrom               = "+15551230000"
	defaultTo                 = "+15559870000"
)

// prepared is a validated Options with its parsed application URL.
type prepared struct {
	Options
	app       fragment.Target
	statusURL *fragment.Target
}

func (o *Options) prepare() (*prepared, error) {
	if o.AckTimeout < 0 || o.IdleLimit < 0 || o.MaxDuration < 0 {
		return nil, fmt.Errorf("%w: negative duration", ErrInvalidOptions)
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.WebhookErrorReturn == 0 {
		o.WebhookErrorReturn = DefaultWebhookErrorReturn
	}
	if o.WebhookErrorReturn < 400 || o.WebhookErrorReturn > 699 {
		return nil, fmt.Errorf("%w: WebhookErrorReturn %d is not a SIP failure status (400..699)", ErrInvalidOptions, o.WebhookErrorReturn)
	}
	if o.IdleLimit == 0 {
		o.IdleLimit = DefaultIdleLimit
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if len(o.EgressRules.Schemes) == 0 {
		o.EgressRules = transport.CallControlRules(false)
	}
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if err := o.Script.validate(); err != nil {
		return nil, err
	}
	app, err := fragment.Parse(o.AppURL)
	if err != nil {
		return nil, fmt.Errorf("%w: application URL: %w", ErrInvalidOptions, err)
	}
	p := &prepared{Options: *o, app: app}
	switch app.Policy.Transport {
	case fragment.HTTP:
		if o.Hooks == nil {
			return nil, fmt.Errorf("%w: an HTTP application needs Options.Hooks", ErrInvalidOptions)
		}
		if o.StatusHookURL != "" {
			t, err := fragment.Resolve(app, o.StatusHookURL)
			if err != nil {
				return nil, fmt.Errorf("%w: status hook: %w", ErrInvalidOptions, err)
			}
			p.statusURL = &t
		}
	}
	for _, m := range []string{o.Method, o.StatusHookMethod} {
		if m != "" && m != "POST" && m != "GET" {
			return nil, fmt.Errorf("%w: method %q (want POST or GET)", ErrInvalidOptions, m)
		}
	}
	return p, nil
}

// Validate reports whether o can run a call, with the error Run would return.
func (o Options) Validate() error {
	_, err := o.prepare()
	return err
}
