package callctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// hands them to its outbox for durable, asynchronous delivery (docs/call-control.md §8).
// NotifyStatus must not block on the network. It gets the call's fields whatever the
// status hook's method, and sends none of them on a GET, as jambonz does.
type StatusNotifier interface {
	NotifyStatus(ctx context.Context, statusHook fragment.Target, payload map[string]any)
}

// Options describe one call. Zero values take the defaults stated on each field
// (WithDefaults); Validate reports every field that cannot run a call.
type Options struct {
	// AppURL is the application: http(s) for webhooks, ws(s) for a WebSocket, with
	// an optional retry fragment (#rc=..&rp=..). Required unless App is given.
	AppURL string
	// App is the application's URL already parsed (fragment.Parse), for a caller
	// that parsed it to check it: the call uses it as it is, and AppURL is neither
	// read nor parsed again. Default: AppURL parsed.
	App fragment.Target
	// StatusHookURL receives the call's status notifications (absolute, or relative
	// to AppURL). Optional. A WebSocket application gets them on its socket unless
	// this is an http(s) URL, as jambonz does.
	StatusHookURL string
	// StatusHookMethod is POST or GET. Default POST.
	StatusHookMethod string
	// StatusHookUsername and StatusHookPassword authenticate the status hook (its
	// own credentials: the call hook's are never sent to it). Optional.
	StatusHookUsername, StatusHookPassword string
	// StatusNotifier, when set, receives the status notifications for
	// StatusHookURL instead of the call sending them itself.
	StatusNotifier StatusNotifier
	// Method of the call hook: POST or GET. Default POST.
	Method string
	// Username and Password, when set, authenticate hooks (HTTP Basic auth).
	Username, Password string
	// Secret, when set, signs every HTTP hook (Jambonz-Signature).
	Secret string
	// PreviousSecret, when set with Secret, signs every HTTP hook too (a second v1
	// entry): the secret a rotation replaced, during its grace period.
	PreviousSecret string
	// QueueEventHookURL is the account's queue event webhook (jambonz's account
	// queue_event_hook): an absolute http(s) URL, with an optional retry fragment,
	// that gets queue:status when the call joins or leaves a queue, whatever the
	// application's transport. Optional; requires Hooks.
	QueueEventHookURL string

	// Call describes the call. CallSid, CallID, TraceID and AccountSid are
	// generated when empty; From defaults to "+15551230000" and To to
	// "+15559870000". Direction is "inbound" unless it is "outbound" (a call
	// created through a REST API); an inbound call's ApplicationSid is generated
	// when empty, an outbound call's stays as given (empty: none, as jambonz sends
	// a call with an inline call_hook).
	Call CallInfo
	// Application is what the call hook tells the application about itself: its
	// speech settings (defaults), env_vars and service provider. Default: jambonz's
	// defaults, no env_vars.
	Application Application
	// Compat are warnings found before the call started, by whoever placed it (a
	// REST request's fields jambonz ignores): the call records them first, as its
	// own (docs/compatibility.md §2). Default none.
	Compat []Compat
	// Script is what the caller and the network do. Default: a caller who never
	// keys anything, dials that are answered, no faults.
	Script Script

	// Hooks sends HTTP hooks. Required for HTTP applications.
	Hooks HookRequester
	// WebSocket configures the application's connection (HTTPClient should be the
	// shared egress client; HandshakeTimeout, MaxPayload, PingInterval, UserAgent).
	// Its Sleep, Observer and Logger are the call's. Default: wsclient's defaults.
	WebSocket wsclient.Options

	// EgressRules are the rules of the call's own WebSocket transport, used only
	// when the Script has network faults or a drop without a close frame: they must
	// be those of WebSocket.HTTPClient (featureserver.CallNetwork sets both), so that
	// a fault dials exactly where any other dial may. Default
	// transport.CallControlRules(false).
	EgressRules transport.EgressRules

	// EgressHint, when set, ends the alert of a request the egress rules refused:
	// how the user allows that destination (simulate names SWITCHBOARD_EGRESS_ALLOW).
	// Default none.
	EgressHint string

	// QuoteAnswersFrom, when set, says whether the call's alerts and compat warnings
	// may quote what its application answered (the start of a body that is not
	// verbs, verbs that do not validate, a command's data, an error that quotes the
	// answer, such as one that is not HTTP or a TLS certificate's names). It is asked
	// for each destination the call's connections reached (transport.TracePeers);
	// once it answers false for one, they say what kind of answer came and its
	// status, and quote nothing (NotQuotedHint says why). A node quotes only what
	// addresses its accounts' own webhooks may reach answered (docs/call-control.md
	// §5). Default none: everything quoted (simulate and test run the developer's own
	// applications).
	QuoteAnswersFrom func(transport.Peer) bool
	// NotQuotedHint says, in place of what QuoteAnswersFrom kept from being quoted,
	// why, and how the operator can allow it. Default "not quoted".
	NotQuotedHint string

	// AckTimeout is how long a WebSocket message waits for its ack
	// (JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT). Default 5 s.
	AckTimeout time.Duration
	// WebhookErrorReturn is the SIP status (400..699) of a call rejected because its
	// initial HTTP hook failed (JAMBONES_WEBHOOK_ERROR_RETURN). Default 480.
	WebhookErrorReturn int
	// RingTimeout is how long an outbound call rings before it is canceled as
	// no-answer (the create-call request's timeout). Default 60 s.
	RingTimeout time.Duration
	// IdleLimit is how long (real time) a WebSocket call whose verbs ran out waits
	// for a command before the node ends it. Default 30 s.
	IdleLimit time.Duration
	// MaxDuration caps a call's length on its clock (a "say" looping forever).
	// Default 4 h.
	MaxDuration time.Duration
	// MaxRequests caps the requests the call sends its application: HTTP hook
	// attempts (retries included), WebSocket upgrade attempts and messages sent.
	// Once reached, the call ends with ReasonMaxRequests (an application that
	// redirects to itself would otherwise loop without bound). Default 1000.
	MaxRequests int
	// MaxEvents caps the call's timeline: once it holds that many events the call
	// ends with ReasonMaxEvents (the few events of its ending are still recorded),
	// so that the record of a call stays bounded. Default 5000.
	MaxEvents int

	// RealTime runs the call on the wall clock, as a production feature server would
	// (docs/call-control.md §4b): media (say, play, pause, gather timeouts and the
	// caller's input delay, dial legs), retry delays and reconnect backoff pass for
	// real, and the timeline reports real time since the call started. Those waits are
	// cut short by what the call must react to at once: the context's end, live call
	// control, a WebSocket application's command that ends the call or replaces its
	// verbs, the caller hanging up (Script.HangupAfter) and MaxDuration. Default false:
	// the simulated clock, on which they take no time.
	RealTime bool
	// Clock is the real clock a call's simulated time runs on: a call's time is the
	// real time elapsed on Clock plus the simulated time of media and retry delays.
	// Waits for the network (ack timeouts, IdleLimit) are real time whatever Clock
	// says. Unused with RealTime, whose time is the timers' own. Default
	// retry.SystemClock{}.
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

// The Call defaults of Options.
const (
	defaultFrom = "+15551230000"
	defaultTo   = "+15559870000"
)

// defaultMaxDuration is Options.MaxDuration's default; a loop "forever" is twice it.
const defaultMaxDuration = 4 * time.Hour

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	setDefault(&o.Method, "POST")
	setDefault(&o.StatusHookMethod, "POST")
	if len(o.EgressRules.Schemes) == 0 {
		o.EgressRules = transport.CallControlRules(false)
	}
	setDefault(&o.AckTimeout, 5*time.Second)
	setDefault(&o.WebhookErrorReturn, 480)
	setDefault(&o.IdleLimit, 30*time.Second)
	setDefault(&o.RingTimeout, defaultDialTimeout)
	setDefault(&o.MaxDuration, defaultMaxDuration)
	setDefault(&o.MaxRequests, 1000)
	setDefault(&o.MaxEvents, 5000)
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	o.Application = o.Application.withDefaults()
	return o
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Validate reports whether o can run a call, with the error Run would return: one
// line per bad field, each wrapping ErrInvalidOptions.
func (o Options) Validate() error {
	_, err := o.prepare()
	return err
}

// prepared is a valid Options, with its defaults, and its parsed URLs.
type prepared struct {
	Options
	app       fragment.Target
	statusURL *fragment.Target
	queueHook *fragment.Target
}

// prepare fills in the defaults and checks every field, reporting all that are bad
// at once.
func (o Options) prepare() (*prepared, error) {
	o = o.WithDefaults()
	p := &prepared{Options: o}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"AckTimeout", o.AckTimeout}, {"IdleLimit", o.IdleLimit}, {"MaxDuration", o.MaxDuration}, {"RingTimeout", o.RingTimeout}} {
		if d.v < 0 {
			bad("%s %v is negative", d.name, d.v)
		}
	}
	for _, w := range o.Compat {
		if !slices.Contains(compatRules, w.Rule) {
			bad("Compat: unknown rule %q", w.Rule)
		}
	}
	if o.MaxRequests < 0 {
		bad("MaxRequests %d is negative", o.MaxRequests)
	}
	if o.MaxEvents < 0 {
		bad("MaxEvents %d is negative", o.MaxEvents)
	}
	if o.WebhookErrorReturn < 400 || o.WebhookErrorReturn > 699 {
		bad("WebhookErrorReturn %d is not a SIP failure status (400..699)", o.WebhookErrorReturn)
	}
	for _, m := range []string{o.Method, o.StatusHookMethod} {
		if m != "POST" && m != "GET" {
			bad("method %q (want POST or GET)", m)
		}
	}
	errs = append(errs, o.Script.validate()...)
	app, err := o.App, error(nil)
	if app.URL == nil {
		app, err = fragment.Parse(o.AppURL)
	}
	if err != nil {
		bad("application URL: %w", err)
	} else {
		p.app = app
		if app.Policy.Transport == fragment.HTTP && o.Hooks == nil {
			bad("an HTTP application needs Options.Hooks")
		}
		if o.StatusHookURL != "" {
			if t, err := fragment.Resolve(app, o.StatusHookURL); err != nil {
				bad("status hook: %w", err)
			} else {
				p.statusURL = &t
			}
			if p.statusURL != nil && p.statusURL.Policy.Transport == fragment.HTTP && o.Hooks == nil {
				bad("an http(s) status hook needs Options.Hooks")
			}
		}
	}
	if h := o.QueueEventHookURL; h != "" {
		t, err := fragment.Parse(h)
		switch {
		case err != nil:
			bad("queue event hook: %w", err)
		case t.Policy.Transport != fragment.HTTP:
			bad("queue event hook %q: want an http(s) URL (jambonz requests it as a webhook)", t.Clean())
		case o.Hooks == nil:
			bad("a queue event hook needs Options.Hooks")
		default:
			p.queueHook = &t
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}
