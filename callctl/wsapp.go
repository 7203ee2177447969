package callctl

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// Errors of a WebSocket request (a message that waits for its ack).
var (
	// ErrAckTimeout: the application did not ack within Options.AckTimeout.
	ErrAckTimeout = errors.New("callctl: no ack in time")
	// ErrSessionClosed: the application closed the session (1000), or the
	// connection is gone for good: nothing more is sent.
	ErrSessionClosed = errors.New("callctl: session closed")
)

// wsApp is a WebSocket application: one session per call (CALL-CONTROL.md §4).
type wsApp struct {
	c      *callRun
	wsOpts wsclient.Options
	faults *faultInjector

	conn     *wsclient.Conn
	reconn   *wsclient.Reconnector
	graceful bool // the app closed with 1000: no reconnect, nothing more sent
	gone     bool // the connection is lost for good

	nextID     int
	sessionNew json.RawMessage // the original session:new data, resent on reconnect
	// standIn is the verbs of a session:reconnect ack received while session:new was
	// still waiting: they start the call.
	standIn []verbs.Verb
	hasIn   bool
	// starting is true while session:new waits for its ack.
	starting bool
	// reconnecting is true during a reconnect episode; attemptsSoFar counts the
	// attempts of the current dial or episode (for hook.retry events).
	reconnecting   bool
	attemptsSoFar  int
	reconnectDepth int
	// dropPending: a scenario fault closed the connection; the drop is handled at
	// the next read or write.
	dropPending bool
	// early holds acks that arrived while session:reconnect waited for its own:
	// the request they answer picks them up.
	early map[string]json.RawMessage
	// awaitingReconnect is true while session:reconnect waits for its ack: nothing
	// else is sent meanwhile (§4). Messages the node would send wait in heldOut,
	// commands from the app (whose effects may send) in heldCommands, until the ack.
	awaitingReconnect bool
	heldOut           []outgoing
	heldCommands      []AppMessage
}

// outgoing is a message held until session:reconnect is acked.
type outgoing struct {
	typ, id, hook string
	data          any
}

func newWSApp(c *callRun) *wsApp {
	a := &wsApp{c: c}
	o := c.opts.WebSocket
	o.Sleep = func(ctx context.Context, d time.Duration) error {
		return c.retryWait(ctx, c.opts.app.Clean(), a.attemptsSoFar+1, d)
	}
	o.Observer = func(at wsclient.Attempt) {
		a.attemptsSoFar = at.Number
		c.result.HookLatencies = append(c.result.HookLatencies, at.Duration)
		if a.reconnecting {
			c.record(Event{Kind: KindWSReconnect, Attempt: at.Number})
		}
		c.record(Event{Kind: KindHookAttempt, URL: c.opts.app.Clean(), Transport: string(fragment.WebSocket), Attempt: at.Number,
			HTTPStatus: at.Status, Class: string(at.Class), Duration: at.Duration})
	}
	// The client's own lines (connected, ended, reconnecting) are about this call.
	o.Logger = c.opts.Logger.With().Str("call_sid", c.info.CallSid).Logger()
	if c.opts.Username != "" || c.opts.Password != "" {
		// The application's credentials go on the upgrade, as Basic auth (jambonz
		// passes them to its WebSocket client the same way).
		o.Header = o.Header.Clone()
		if o.Header == nil {
			o.Header = http.Header{}
		}
		o.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.opts.Username+":"+c.opts.Password)))
	}
	a.faults = newFaultInjector(c.opts.Script.Faults, &o, c.opts.EgressRules)
	a.wsOpts = o
	return a
}

// start opens the connection and sends session:new; its ack's verbs start the call.
func (a *wsApp) start(ctx context.Context) ([]verbs.Verb, bool) {
	c := a.c
	c.result.Hooks = append(c.result.Hooks, c.opts.app.URL.Path)
	conn, err := wsclient.Dial(ctx, c.opts.app, a.wsOpts)
	if err != nil {
		a.gone = true
		if ctx.Err() != nil {
			c.endCanceled()
			return nil, false
		}
		// §6: the call fails; nothing more is sent for it.
		c.alert(AlertWebhookConnectionFailure, c.opts.app.Clean(), fmt.Sprintf("connect %s: %v", c.opts.app.Clean(), err))
		c.end(StatusFailed, ReasonConnectFailed, c.opts.WebhookErrorReturn)
		return nil, false
	}
	a.opened(conn)
	// Encoded once: session:reconnect resends exactly these bytes.
	a.sessionNew, _ = json.Marshal(c.info.fields())
	a.starting = true
	data, err := a.request(ctx, msgSessionNew, "", a.sessionNew)
	a.starting = false
	if a.hasIn {
		// The connection dropped while session:new waited: the session:reconnect
		// ack stood in for it.
		return a.startWith(ctx, a.standIn), true
	}
	if err != nil {
		switch {
		case c.ended:
		case ctx.Err() != nil:
			c.endCanceled()
			a.closeWith(ctx, 1001, "call canceled")
		default:
			c.alert(AlertWebhookFailure, c.opts.app.Clean(), fmt.Sprintf("session:new: %v", err))
			c.end(StatusFailed, ReasonSessionFailed, c.opts.WebhookErrorReturn)
			a.closeWith(ctx, 1001, "session:new failed")
		}
		return nil, false
	}
	var vs []verbs.Verb
	if data != nil {
		if vs, err = verbs.Decode(data); err != nil {
			a.invalid(ctx, err)
			if c.answered {
				// A redirect of an answered call: the new application's session is
				// open; the call waits for its commands, as after an ack without verbs.
				return a.startWith(ctx, nil), true
			}
			// Nothing the call could start with: the initial session:new failed (§4,
			// 1001), and the call is rejected as an HTTP application's would be (§6).
			c.end(StatusFailed, ReasonInvalidPayload, c.opts.WebhookErrorReturn)
			a.closeWith(ctx, 1001, "session:new failed")
			return nil, false
		}
	}
	return a.startWith(ctx, vs), true
}

// startWith returns the verbs the call starts with: the session:new ack's, changed
// by the commands the application sent before that ack (a redirect replaces them,
// or appends to them with queueCommand), in order.
func (a *wsApp) startWith(ctx context.Context, vs []verbs.Verb) []verbs.Verb {
	if len(a.heldCommands) == 0 {
		return vs
	}
	a.c.queue = vs
	a.applyHeldCommands(ctx)
	return a.c.queue
}

func (a *wsApp) opened(conn *wsclient.Conn) {
	a.conn = conn
	a.c.record(Event{Kind: KindWSOpen, URL: a.c.opts.app.Clean()})
}

// request sends a message that waits for an ack and returns the ack's data. While
// it waits, commands are applied and invalid messages answered; a drop runs a
// reconnect episode and the wait goes on (the app may ack on the new connection).
func (a *wsApp) request(ctx context.Context, typ, hook string, data any) (json.RawMessage, error) {
	if a.graceful || a.gone {
		return nil, ErrSessionClosed
	}
	a.nextID++
	id := strconv.Itoa(a.nextID)
	// Acks are waited for in real time, whatever the call's clock.
	sent := time.Now()
	if err := a.deliver(ctx, typ, id, hook, data); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(a.c.opts.AckTimeout)
	for {
		if a.graceful || a.gone || a.c.ended {
			return nil, ErrSessionClosed
		}
		if typ == msgSessionNew && a.hasIn {
			return nil, nil
		}
		if data, ok := a.early[id]; ok {
			delete(a.early, id)
			return data, nil
		}
		m, err := a.receive(ctx, deadline)
		switch {
		case err == nil:
			if m.Type == MsgAck && m.MsgID == id {
				a.c.result.HookLatencies = append(a.c.result.HookLatencies, time.Since(sent))
				return m.Data, nil
			}
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, fmt.Errorf("%s %s: %w (%s)", typ, id, ErrAckTimeout, a.c.opts.AckTimeout)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
	}
}

// send writes one message to the application and records it.
func (a *wsApp) send(ctx context.Context, typ, id, hook string, data any) error {
	b, err := json.Marshal(envelope{Type: typ, MsgID: id, CallSid: a.c.info.CallSid, Hook: hook, Data: data})
	if err != nil {
		return fmt.Errorf("callctl: encoding %s: %w", typ, err)
	}
	if err := a.conn.Write(ctx, b); err != nil {
		return err
	}
	a.c.recordMsg(KindMsgSent, typ, id)
	a.faults.counted(ctx, a)
	return nil
}

// notify sends call:status, fire and forget. After a graceful close it is dropped.
func (a *wsApp) notify(ctx context.Context, payload map[string]any) {
	a.fireAndForget(ctx, msgCallStatus, payload)
}

func (a *wsApp) verbStatus(ctx context.Context, data map[string]any) {
	a.fireAndForget(ctx, msgVerbStatus, data)
}

func (a *wsApp) fireAndForget(ctx context.Context, typ string, data any) {
	if a.conn == nil || a.graceful || a.gone || a.starting {
		return
	}
	a.nextID++
	_ = a.deliver(ctx, typ, strconv.Itoa(a.nextID), "", data)
}

// hook sends verb:hook (or dial:confirm, the same exchange) and waits for its ack;
// an ack's verbs replace the remaining ones.
func (a *wsApp) hook(ctx context.Context, typ string, h *verbs.Hook, payload map[string]any) ([]verbs.Verb, bool, bool) {
	c := a.c
	if isAbsoluteHTTP(h.URL) {
		// An absolute http(s) hook is a webhook even in a WebSocket application (as
		// in jambonz): its scheme chooses the transport, with its own retry policy.
		return (&httpApp{c: c}).hook(ctx, typ, h, payload)
	}
	if a.graceful || a.gone {
		// §4: after a graceful close nothing more is sent; the call finishes the
		// verbs it has.
		return nil, false, false
	}
	// The retry fragment is ours (§1: always removed), not the application's.
	hook, _, _ := strings.Cut(h.URL, "#")
	c.result.Hooks = append(c.result.Hooks, hook)
	data, err := a.request(ctx, typ, hook, payload)
	if err != nil {
		if !c.ended && !errors.Is(err, ErrSessionClosed) && ctx.Err() == nil {
			c.alert(AlertWebhookFailure, c.opts.app.Clean(), fmt.Sprintf("%s %s: %v", typ, hook, err))
		}
		return nil, false, false
	}
	vs := a.ackVerbs(ctx, data)
	return vs, len(vs) > 0, true
}

// ackVerbs validates an ack's verbs. Invalid verbs are an invalid-app-payload,
// answered with jambonz:error, and count as no verbs.
func (a *wsApp) ackVerbs(ctx context.Context, data json.RawMessage) []verbs.Verb {
	if data == nil {
		return nil
	}
	vs, err := verbs.Decode(data)
	if err != nil {
		a.invalid(ctx, err)
		return nil
	}
	return vs
}

// between applies the commands that arrived while verbs ran.
func (a *wsApp) between(ctx context.Context) {
	if a.conn == nil || a.gone {
		return
	}
	if a.dropPending {
		a.dropped(ctx, errInjectedDrop)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for !a.c.ended && !a.gone {
		if _, err := a.receive(done, time.Time{}); err != nil {
			return
		}
	}
}

// exhausted: the verbs ran out. The call waits for a command until the caller
// hangs up, the application closes with 1000 or the idle limit passes.
func (a *wsApp) exhausted(ctx context.Context) (bool, string) {
	c := a.c
	if a.graceful || a.gone {
		return false, ReasonAppClosed
	}
	wait := c.opts.IdleLimit
	reason := ReasonIdle
	if limit, why := c.deadline(); limit-c.elapsed() < wait {
		wait, reason = max(limit-c.elapsed(), 0), why
	}
	deadline := time.Now().Add(wait) // the idle limit is real time
	// A live-call command (a node's API) interrupts the wait: execute applies it.
	wctx, stop := c.controls.waitContext(ctx, c.opts.Control)
	defer stop()
	for len(c.queue) == 0 && !c.ended {
		if a.graceful || a.gone {
			return false, ReasonAppClosed
		}
		if _, err := a.receive(wctx, deadline); err != nil {
			if c.controls.pending() {
				return true, ""
			}
			if ctx.Err() != nil {
				c.endCanceled()
				return false, c.result.Reason
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return false, reason
			}
		}
	}
	return true, ""
}

// finish sends the final call:status and closes with 1000 (§4).
func (a *wsApp) finish(ctx context.Context) {
	if a.conn == nil {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	if !a.graceful && !a.gone {
		a.notify(ctx, a.c.info.fields())
	}
	a.closeWith(ctx, 1000, "call ended")
}

// closeWith closes the connection (once) and records the node's close code.
func (a *wsApp) closeWith(_ context.Context, code int, reason string) {
	if a.conn == nil {
		return
	}
	if !a.graceful && !a.gone {
		a.c.recordClose(code)
	}
	_ = a.conn.Close(code, reason)
	a.gone = true
}

// invalid raises invalid-app-payload and answers with jambonz:error.
func (a *wsApp) invalid(ctx context.Context, err error) {
	a.c.alert(AlertInvalidAppPayload, a.c.opts.app.Clean(), err.Error())
	if a.graceful || a.gone {
		return
	}
	a.nextID++
	_ = a.deliver(ctx, msgJambonzError, strconv.Itoa(a.nextID), "", map[string]any{
		"msg": "InvalidMessage", "details": err.Error(),
	})
}

// isAbsoluteHTTP reports whether a hook URL is an absolute http(s) URL.
func isAbsoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https"))
}
