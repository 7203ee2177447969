package callctl

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// wsApp is a WebSocket application: one session per call (docs/call-control.md §4).
// The session (package wssession) speaks the protocol; wsApp is what its messages
// mean for the call, and the timeline of what it did.
type wsApp struct {
	c *callRun
	s *wssession.Session

	// standIn holds the data of a session:reconnect ack received while
	// session:new was still waiting: its verbs start the call.
	standIn json.RawMessage
	hasIn   bool

	// hookIndex is the Result.Hooks entry of the request about to be sent (-1: none);
	// requests maps a msgid to its Result.Requests entry, for its ack.
	hookIndex int
	requests  map[string]int
}

func newWSApp(c *callRun) *wsApp {
	a := &wsApp{c: c, hookIndex: -1}
	o := c.opts.WebSocket
	if c.opts.Username != "" || c.opts.Password != "" {
		// The application's credentials go on the upgrade, as Basic auth (jambonz
		// passes them to its WebSocket client the same way).
		o.Header = o.Header.Clone()
		if o.Header == nil {
			o.Header = http.Header{}
		}
		o.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.opts.Username+":"+c.opts.Password)))
	}
	faults := make([]wssession.Fault, len(c.opts.Script.Faults))
	for i, f := range c.opts.Script.Faults {
		faults[i] = wssession.Fault(f)
	}
	app := c.opts.app.Clean()
	a.s = wssession.New(c.ctx, wssession.Options{
		Target:     c.opts.app,
		CallSid:    c.envelopeCallSid(),
		WebSocket:  o,
		AckTimeout: c.opts.AckTimeout,
		Sleep: func(ctx context.Context, attempt int, d time.Duration) error {
			return c.retryWait(ctx, app, attempt, d)
		},
		Faults:      faults,
		Connect:     c.netConnect(),
		EgressRules: c.opts.EgressRules,
		Logger:      c.opts.Logger.With().Str("call_sid", c.info.CallSid).Logger(),
	}, a)
	return a
}

// start sends session:new, opening the connection first unless a status
// notification opened it already; its ack is the call's answer (startVerbs).
func (a *wsApp) start(ctx context.Context) (answer, bool) {
	return a.first(ctx, wssession.MsgSessionNew, "", a.c.callHookPayload())
}

// connect opens the connection, once. When it cannot be opened the call fails
// (docs/call-control.md §6 row 3) and connect reports false.
func (a *wsApp) connect(ctx context.Context) bool {
	c := a.c
	if a.s.State() != wssession.Idle {
		return !a.s.Ended()
	}
	if err := a.s.Dial(ctx); err != nil {
		switch {
		case ctx.Err() != nil:
			c.endCanceled()
		case interrupted(err):
			// Cut short on the wall clock: the call ended, or a redirect waits for
			// execute to move it (the session is gone).
		default:
			// docs/call-control.md §6: the call fails; nothing more is sent for it.
			c.alert(AlertWebhookConnectionFailure, c.opts.app.Clean(), c.failureDetail("connect", c.opts.app.Clean(), err))
			c.end(StatusFailed, ReasonConnectFailed, c.opts.WebhookErrorReturn)
		}
		return false
	}
	return true
}

// first sends the session's first request, typ (session:new, or session:redirect
// when a redirect verb moved the call to this application), and returns its ack as
// the application's answer. ok false means the call ended, or a redirect waits for
// execute (the session is gone).
func (a *wsApp) first(ctx context.Context, typ, hook string, payload map[string]any) (answer, bool) {
	c := a.c
	c.result.Hooks = append(c.result.Hooks, cmp.Or(hook, c.opts.app.URL.Path))
	a.hookIndex = len(c.result.Hooks) - 1
	if !a.connect(ctx) {
		return answer{}, !c.ended
	}
	data, _ := json.Marshal(wirePayload(payload))
	ack, err := a.s.Start(ctx, typ, hook, data)
	if a.hasIn {
		// The connection dropped while the first request waited: the
		// session:reconnect ack stood in for it.
		ack, err = a.standIn, nil
	}
	if err != nil {
		switch {
		case c.ended:
		case c.cut && a.s.Ended():
			// A reconnect was cut short by a redirect: execute moves the call.
			return answer{}, true
		case ctx.Err() != nil:
			c.endCanceled()
			a.s.Close(1001, "call canceled")
		default:
			c.alert(AlertWebhookFailure, c.opts.app.Clean(), fmt.Sprintf("%s: %v", typ, err))
			c.end(StatusFailed, ReasonSessionFailed, c.opts.WebhookErrorReturn)
			a.s.Close(1001, typ+" failed")
		}
		return answer{}, false
	}
	ans := c.unquoted(dataAnswer(ack), "an ack")
	ans.url = c.opts.app.Clean()
	return ans, true
}

// notify sends call:status, fire and forget: not while session:new waits for its
// ack, and dropped after a graceful close. A status hook that is an absolute http(s)
// URL gets it as a webhook instead, as jambonz's WebSocket requestor sends any http
// URL. Before session:new, which only an outbound call's statuses come (trying,
// ringing, in-progress), jambonz opens the socket to send them, without call_sid.
func (a *wsApp) notify(ctx context.Context, payload map[string]any) {
	c := a.c
	if a.statusOverHTTP() {
		(&httpApp{c: c}).notify(ctx, payload)
		return
	}
	if a.s.State() == wssession.Idle {
		if !a.connect(ctx) {
			return
		}
		c.compat(CompatStatusBeforeSession, "call:status %s goes to the WebSocket before session:new, as jambonz sends an outbound call's first statuses, without call_sid: the official SDKs drop a message that comes before session:new", payload["call_status"])
	}
	if !a.s.Starting() {
		a.s.Notify(ctx, wssession.MsgCallStatus, wirePayload(payload))
	}
}

func (a *wsApp) verbStatus(ctx context.Context, data map[string]any) {
	if !a.s.Starting() {
		a.s.Notify(ctx, wssession.MsgVerbStatus, wirePayload(data))
	}
}

// hook sends verb:hook (or dial:confirm, session:redirect: the same exchange) and
// waits for its ack, which is the application's answer.
func (a *wsApp) hook(ctx context.Context, typ string, h *verbs.Hook, payload map[string]any) (answer, bool) {
	c := a.c
	if isAbsoluteHTTP(h.URL) {
		// An absolute http(s) hook is a webhook even in a WebSocket application (as
		// in jambonz): its scheme chooses the transport, with its own retry policy.
		return (&httpApp{c: c}).hook(ctx, typ, h, payload)
	}
	if a.s.Ended() {
		// docs/call-control.md §4: after a graceful close nothing more is sent; the call
		// finishes the verbs it has.
		return answer{}, false
	}
	if fragment.Redact(h.URL) != h.URL {
		// A hook with user-info is refused, as anywhere (docs/call-control.md §3);
		// nothing goes over the socket and the alert does not quote it.
		_, err := fragment.Resolve(c.opts.app, h.URL)
		c.alert(AlertInvalidAppPayload, fragment.Redact(h.URL), fmt.Sprintf("hook: %v", err))
		return answer{}, false
	}
	// The retry fragment is ours (docs/call-control.md §1: always removed), not the
	// application's.
	hook, _, _ := strings.Cut(h.URL, "#")
	c.result.Hooks = append(c.result.Hooks, hook)
	a.hookIndex = len(c.result.Hooks) - 1
	data, err := a.s.Request(ctx, typ, hook, wirePayload(payload))
	if err != nil {
		if !c.ended && !errors.Is(err, wssession.ErrSessionClosed) && ctx.Err() == nil {
			c.alert(AlertWebhookFailure, c.opts.app.Clean(), fmt.Sprintf("%s %s: %v", typ, hook, err))
		}
		return answer{}, false
	}
	ans := c.unquoted(dataAnswer(data), "an ack")
	ans.url = hook
	return ans, true
}

// between applies the commands that arrived while verbs ran.
func (a *wsApp) between(ctx context.Context) { a.s.Poll(ctx) }

// listen handles what the application sends while media plays on the wall clock:
// one message, or nothing until d passed. A session that is over has nothing to say.
func (a *wsApp) listen(ctx context.Context, d time.Duration) error {
	if a.s.State() == wssession.Idle || a.s.Ended() {
		return a.c.clock.Sleep(ctx, d)
	}
	return a.s.Wait(ctx, time.Now().Add(d))
}

// exhausted: the verbs ran out. The call waits for a command until the caller
// hangs up, the application closes with 1000 or the idle limit passes.
func (a *wsApp) exhausted(ctx context.Context) (bool, string) {
	c := a.c
	if a.s.Ended() {
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
		if a.s.Ended() {
			return false, ReasonAppClosed
		}
		if _, at, ok := c.dueUtterance(); ok {
			// The caller speaks to what listens in the background while the
			// application has nothing more to play.
			c.cut = false
			c.hearDue(ctx, at)
			c.cut = false
			continue
		}
		if err := a.s.Wait(wctx, deadline); err != nil {
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

// finish sends the final call:status and closes with 1000 (docs/call-control.md §4).
func (a *wsApp) finish(ctx context.Context) {
	if a.s.State() == wssession.Idle && !a.statusOverHTTP() {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	if a.statusOverHTTP() || !a.s.Ended() {
		a.notify(ctx, a.c.info.fields())
	}
	if a.s.State() != wssession.Idle {
		a.s.Close(1000, "call ended")
	}
}

// statusOverHTTP reports whether the call's status notifications go to an http(s)
// status hook rather than over the socket.
func (a *wsApp) statusOverHTTP() bool {
	h := a.c.opts.statusURL
	return h != nil && h.Policy.Transport == fragment.HTTP
}

// release closes the session with 1000 at the call's end, with no final
// call:status: the notifications go to another application (callRun.notifier).
func (a *wsApp) release(context.Context) {
	if a.s.State() != wssession.Idle {
		a.s.Close(1000, "call ended")
	}
}

// envelopeCallSid is the call_sid of the session's envelopes: none on an adulted
// leg's connection, whose requestor never sent session:new (ws-requestor.js takes
// call_sid from it).
func (c *callRun) envelopeCallSid() string {
	if c.adulting {
		return ""
	}
	return c.info.CallSid
}

// isAbsoluteHTTP reports whether a hook URL is an absolute http(s) URL: an absolute
// URL (isAbsolute) of an http scheme, as ws-requestor.js tests it
// (_isAbsoluteUrl(url) && url.startsWith('http')).
func isAbsoluteHTTP(raw string) bool {
	return isAbsolute(raw) && (len(raw) > 4 && strings.EqualFold(raw[:4], "http"))
}

// What the session reports becomes the call's timeline (wssession.Call).

func (a *wsApp) Opened() { a.c.record(Event{Kind: KindWSOpen, URL: a.c.opts.app.Clean()}) }

func (a *wsApp) Closed(code int) { a.c.recordClose(code) }

func (a *wsApp) Sent(typ, msgid, hook string, data any) {
	c := a.c
	q := Request{Transport: string(fragment.WebSocket), Type: typ, Hook: hook, Event: c.timeline.len(), HookIndex: -1}
	switch typ {
	case wssession.MsgSessionNew, wssession.MsgSessionReconnect, wssession.MsgSessionAdulting:
		q.Hook = c.opts.app.URL.Path
	}
	switch typ {
	case wssession.MsgSessionNew, wssession.MsgVerbHook, wssession.MsgDialConfirm, wssession.MsgSessionRedirect:
		// The request that hook or start listed in Result.Hooks.
		q.HookIndex, a.hookIndex = a.hookIndex, -1
	}
	raw, isJSON := data.(json.RawMessage)
	if d, ok := data.(map[string]any); ok {
		q.Payload = d
	}
	i := c.result.addRequest(q)
	if i >= 0 && isJSON {
		c.payloadLater(i, raw)
	}
	if i >= 0 && typ != wssession.MsgCallStatus && typ != wssession.MsgVerbStatus && typ != wssession.MsgJambonzError {
		if a.requests == nil {
			a.requests = map[string]int{}
		}
		a.requests[msgid] = i // its ack is awaited
	}
	if withData(typ, data, c.info.CallSid) {
		c.record(Event{Kind: KindMsgSent, Type: typ, MsgID: msgid, Data: eventData(data)})
		return
	}
	c.recordMsg(KindMsgSent, typ, msgid)
}

// withData reports whether the timeline shows a sent message's payload: those of
// voice AI and of a dialed leg (whose call_sid is not the call's), which no
// Result.Requests entry holds in full.
func withData(typ string, data any, callSid string) bool {
	switch typ {
	case wssession.MsgLlmEvent, wssession.MsgLlmToolCall, wssession.MsgTtsTokensResult,
		wssession.MsgTtsStreamingEvent, wssession.MsgSessionAdulting, wssession.MsgJambonzError:
		return true
	case wssession.MsgCallStatus:
		d, ok := data.(map[string]any)
		return ok && d["call_sid"] != callSid
	}
	return false
}

func (a *wsApp) Received(m wssession.AppMessage) {
	if m.Type != wssession.MsgCommand {
		a.c.recordMsg(KindMsgRecv, m.Type, m.MsgID)
		return
	}
	data := redactJSON(m.Data)
	if m.Command == "llm:tool-output" && m.ToolCallID != "" {
		// The tool call it answers rides beside data: show both.
		data, _ = json.Marshal(map[string]any{"tool_call_id": m.ToolCallID, "data": data})
	}
	a.c.record(Event{Kind: KindMsgRecv, Type: m.Type, MsgID: m.MsgID, Command: m.Command, Data: eventData(data)})
}

func (a *wsApp) Attempt(at wsclient.Attempt, reconnect bool) {
	c := a.c
	c.result.HookLatencies = append(c.result.HookLatencies, at.Duration)
	if reconnect {
		c.record(Event{Kind: KindWSReconnect, Attempt: at.Number})
	}
	c.recordFaults(c.opts.app.Clean(), at.Number)
	c.record(Event{Kind: KindHookAttempt, URL: c.opts.app.Clean(), Transport: string(fragment.WebSocket), Attempt: at.Number,
		HTTPStatus: at.Status, Class: string(at.Class), Duration: at.Duration})
}

func (a *wsApp) Answered(msgid string, d time.Duration) {
	a.c.result.HookLatencies = append(a.c.result.HookLatencies, d)
	if i, ok := a.requests[msgid]; ok {
		a.c.result.answered(i, d)
		delete(a.requests, msgid)
		if len(a.requests) == 0 {
			a.requests = nil // a call waiting for commands holds no empty map
		}
	}
}

func (a *wsApp) Ended() bool { return a.c.ended }

// Invalid raises invalid-app-payload and answers with jambonz:error.
func (a *wsApp) Invalid(ctx context.Context, err error, content []byte) {
	detail := err.Error()
	if !a.c.quotable() {
		detail = "an invalid message (" + a.c.notQuoted() + ")"
	}
	a.c.alert(AlertInvalidAppPayload, a.c.opts.app.Clean(), detail)
	a.s.Reject(ctx, err, content)
}

// Resumed applies the session:reconnect ack: while session:new still waits, its verbs
// start the call (docs/call-control.md §4); mid-call, verbs in it replace the remaining
// ones.
func (a *wsApp) Resumed(ctx context.Context, data json.RawMessage, standIn bool) {
	if standIn {
		a.standIn, a.hasIn = data, true
		return
	}
	c := a.c
	ans := c.unquoted(dataAnswer(data), "an ack")
	ans.url = c.opts.app.Clean()
	c.takeAnswer(ctx, nil, ans)
}

// Lost ends the call after a drop that could not be repaired (docs/call-control.md §6).
func (a *wsApp) Lost(detail string) {
	c := a.c
	if !c.quotable() {
		// The detail holds the connection's last error: a close frame's reason, say.
		detail = "the WebSocket was lost and could not be reconnected (" + c.notQuoted() + ")"
	}
	c.alert(AlertWebhookConnectionFailure, c.opts.app.Clean(), detail)
	if c.answered {
		c.end(StatusCompleted, ReasonReconnectFailed, 200)
	} else {
		c.end(StatusFailed, ReasonReconnectFailed, c.opts.WebhookErrorReturn)
	}
}

// message sends a fire-and-forget message; an absolute http(s) hook is requested as
// a webhook, as jambonz's WsRequestor does.
func (a *wsApp) message(ctx context.Context, typ string, h *verbs.Hook, data map[string]any) {
	if h != nil && isAbsoluteHTTP(h.URL) {
		(&httpApp{c: a.c}).message(ctx, typ, h, data)
		return
	}
	if a.s.Starting() {
		return
	}
	hook := ""
	if h != nil {
		hook, _, _ = strings.Cut(h.URL, "#")
	}
	a.s.NotifyHook(ctx, typ, hook, wirePayload(data))
}

// toolCall sends llm:tool-call; the output comes as a command.
func (a *wsApp) toolCall(ctx context.Context, h *verbs.Hook, data map[string]any) (json.RawMessage, bool, map[string]any) {
	if isAbsoluteHTTP(h.URL) {
		return (&httpApp{c: a.c}).toolCall(ctx, h, data)
	}
	a.message(ctx, wssession.MsgLlmToolCall, h, data)
	return nil, false, nil
}
