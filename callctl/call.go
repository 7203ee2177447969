package callctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/netfault"
	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
)

// application is the transport side of a call: an HTTP webhook app or a WebSocket
// session. All methods run on the call's goroutine.
type application interface {
	// start asks the application for the call's first verbs: its answer, which
	// startVerbs judges. ok false means the call already ended (start called
	// c.end).
	start(ctx context.Context) (ans answer, ok bool)
	// hook requests a hook of a verb and returns the application's answer; ok
	// false means the request failed (already alerted). typ is the WebSocket message
	// type: verb:hook, or dial:confirm for a dial's confirm hook.
	hook(ctx context.Context, typ string, h *verbs.Hook, payload map[string]any) (ans answer, ok bool)
	// notify sends a fire-and-forget notification (call:status), best effort.
	notify(ctx context.Context, payload map[string]any)
	// between runs between verbs: a WebSocket app's commands are applied here.
	between(ctx context.Context)
	// exhausted is called when the verbs ran out. more false ends the call with
	// reason (a WebSocket app may send a command meanwhile, which queues verbs).
	exhausted(ctx context.Context) (more bool, reason string)
	// verbStatus reports a verb starting or finishing (config notifyEvents).
	verbStatus(ctx context.Context, data map[string]any)
	// finish sends the final status notification and releases the application at
	// the end of the call.
	finish(ctx context.Context)
	// release releases the application at the end of the call, when the status
	// notifications go elsewhere (callRun.notifier).
	release(ctx context.Context)
	// listen waits up to d on the wall clock while media plays, handling what the
	// application sends meanwhile (a WebSocket app's commands). It returns after d,
	// after each message handled, or when ctx ends.
	listen(ctx context.Context, d time.Duration) error
	// message sends a fire-and-forget message (llm:event, tts:*, session:adulting,
	// a dialed leg's call:status) with its hook, nil for none: a WebSocket app gets
	// it on its socket; an HTTP app gets the hook requested, its answer ignored (a
	// message without a hook goes nowhere).
	message(ctx context.Context, typ string, h *verbs.Hook, data map[string]any)
	// toolCall requests an llm verb's toolHook. An HTTP app's answer is the tool
	// output (answered true); a WebSocket app answers later, with an llm:tool-output
	// command. failed is the error fields of what jambonz's sendToolHook throws (the
	// request failed, or its answer is not a JSON object or array), nil when none.
	toolCall(ctx context.Context, h *verbs.Hook, data map[string]any) (output json.RawMessage, answered bool, failed map[string]any)
}

// callRun is one call in progress. It is driven by Run and is not safe for concurrent
// use.
type callRun struct {
	opts *prepared
	// peers are the destinations the call's connections reached, when
	// Options.QuoteAnswersFrom judges them (quotable); nil otherwise.
	peers *transport.Peers
	clock callClock
	start time.Time // on clock
	info  CallInfo
	app   application
	// notifier, when set, is where the status notifications go instead of app: the
	// application the call had when a handover moved it (keepNotifier).
	notifier application

	queue    []verbs.Verb // the verbs still to run
	current  verbs.Verb   // the verb running, nil between verbs
	answered bool
	ended    bool
	result   Result

	gatherNext   int
	dialNext     int
	notifyEvents bool // config notifyEvents: verb:status messages to a WebSocket app

	// ai is what listens to the caller in the background and the TTS stream.
	ai voiceAI
	// recognizer is the session's, once a config verb set it (speech.go).
	recognizer recognizer
	// llmNext counts the llm verbs run, llmTurns their turns; llmCurrent is the
	// llm verb running.
	llmNext, llmTurns int
	llmCurrent        *llmRun
	// generation counts the times the remaining verbs were replaced (a hook's or a
	// command's verbs): a verb that holds the call ends when it moves.
	generation int
	// dialing is the dial whose legs are bridged, nil when none.
	dialing *dialState
	// callApp is the application the call started with (jambonz's
	// application.call_hook, which a redirect does not change): where an adulted
	// leg's session goes. legs are those sessions, running (adult.go).
	callApp fragment.Target
	legs    []*adultLeg
	// adulting: this is a dialed leg's own session. upBefore is how long the leg
	// was up before it adulted.
	adulting bool
	upBefore time.Duration
	// farEnd counts the scripted queues, dequeues, conferences and bots used.
	queueNext, dequeueNext, confNext, botNext int

	// ctx is the call's own context: what is read while polling with a shorter one
	// (see wsApp.receive) is handled on it.
	ctx context.Context

	controls controlInbox // live-call commands received while the call waited
	muted    bool         // set by a Control (media is simulated)
	// cut: on the wall clock, the current verb was cut short (a redirect arrived);
	// cleared before the next verb starts (wait.go).
	cut bool

	net *netfault.Network // the scenario's faulty network; nil without network faults

	requests int // sent to the application so far (Options.MaxRequests)
	// timeline becomes Result.Timeline when the call ends.
	timeline timeline
	// laterPayloads are Result.Requests payloads kept as the JSON that went out
	// (session:new's and session:reconnect's call fields), decoded when the call
	// ends: the decoded map is several times the size of its JSON, which the
	// session keeps anyway for every session:reconnect, and a live call holds it
	// for as long as it lasts (docs/BENCHMARKS.md §3).
	laterPayloads []laterPayload
}

// laterPayload is the JSON payload of Result.Requests[request].
type laterPayload struct {
	request int
	json    json.RawMessage
}

// payloadLater records that request i's payload is data, decoded at the call's end.
func (c *callRun) payloadLater(i int, data json.RawMessage) {
	c.laterPayloads = append(c.laterPayloads, laterPayload{request: i, json: data})
}

// decodePayloads fills the payloads kept as JSON.
func (c *callRun) decodePayloads() {
	for _, p := range c.laterPayloads {
		_ = json.Unmarshal(p.json, &c.result.Requests[p.request].Payload) // the call's own fields: always an object
	}
	c.laterPayloads = nil
}

// Run runs one call to its end and returns what happened. The error is non-nil only
// for Options that cannot run a call (wrapping ErrInvalidOptions): failures of the
// call itself (a rejected call, a dropped socket) are in the Result. When ctx ends,
// the call ends with ReasonCanceled, or with the text of ctx's cause when it was
// canceled with one of its own (context.WithCancelCause), and a hook cut short by
// it raises no alert.
func Run(ctx context.Context, o Options) (*Result, error) {
	c, err := setUp(&o)
	if err != nil {
		return nil, err
	}
	c.run(ctx)
	return &c.result, nil
}

// setUp prepares the call of o. Apart from Run, so that the copies of Options it
// makes (1 KB each) live in a frame that is gone before the call runs: a live call
// parks its goroutine for as long as it lasts, and a stack that uses more than a
// quarter of itself is never shrunk (bench calls; docs/BENCHMARKS.md §3).
//
//go:noinline
func setUp(o *Options) (*callRun, error) {
	p, err := o.prepare()
	if err != nil {
		return nil, err
	}
	return newCall(p), nil
}

func newCall(p *prepared) *callRun {
	info := p.Call
	if info.Direction != "outbound" {
		// The INVITE's headers name where the call came from (lib/session/call-info.js).
		for k, v := range p.Script.SIPHeaders {
			switch strings.ToLower(k) {
			case "x-originating-carrier":
				info.OriginatingSipTrunkName = v
			case "x-forwarded-for":
				info.OriginatingSipIP = v
			}
		}
	}
	info = info.WithDefaults()
	var clock callClock = newSimulatedClock(p.Clock)
	if p.RealTime {
		clock = wallClock{}
	}
	c := &callRun{
		opts:    p,
		clock:   clock,
		start:   clock.Now(),
		info:    info,
		callApp: p.app,
	}
	c.result.CallSid = info.CallSid
	if nf := netfault.Config(p.Script.Network); nf.Active() {
		c.net = netfault.New(nf, info.CallSid)
	}
	return c
}

func (c *callRun) run(ctx context.Context) {
	if c.opts.QuoteAnswersFrom != nil {
		// Every connection of the call is recorded: what its answers may be quoted to.
		ctx, c.peers = transport.TracePeers(ctx)
	}
	c.ctx = ctx
	c.recordStart()
	for _, w := range c.opts.Compat {
		c.compat(w.Rule, "%s", w.Detail)
	}
	c.recordNetwork()
	c.recordStatus(StatusTrying)
	if c.opts.app.Policy.Transport == fragment.WebSocket {
		c.app = newWSApp(c)
	} else {
		c.app = newHTTPApp(c)
	}
	if c.info.Direction != "outbound" || c.placeOutbound(ctx) {
		if ans, ok := c.app.start(ctx); ok && !c.ended {
			if vs, ok := c.startVerbs(ans); ok {
				if c.info.Direction != "outbound" {
					// trying, once the call has its verbs (lib/session/inbound-call-session.js).
					c.statusApp().notify(ctx, c.info.fields())
				}
				c.queue = vs
				c.execute(ctx)
			}
		}
	}
	c.finishApps(ctx)
	c.result.Duration = c.elapsed()
	// call.end is the call's last event, after the final notification and close;
	// the sessions of its adulted legs follow it, each a call of its own.
	c.recordEnd()
	c.joinLegs()
	c.result.Timeline = c.timeline.all(c.result.CallSid)
	c.timeline = timeline{}
	c.decodePayloads()
}

// placeOutbound plays the outbound leg of a call a REST API created, as jambonz's
// lib/http-routes/api/create-call.js sees it (docs/compatibility.md §7): trying; the
// far end's 180 (ringing) or 183 with SDP (early-media), whose notification keeps
// the sip_reason it had; then its answer (in-progress, 200), after which the call
// hook is requested, or its final failure (busy for 486 and 603, no-answer for 487,
// failed otherwise), which ends the call with no call hook. It reports whether the
// call was answered.
func (c *callRun) placeOutbound(ctx context.Context) bool {
	a := c.opts.Script.Answer.withDefaults()
	c.statusApp().notify(ctx, c.info.fields())
	if c.ended {
		return false
	}
	status, sip := StatusRinging, 180
	if a.EarlyMedia {
		status, sip = StatusEarlyMedia, 183
	}
	c.setStatus(ctx, status, sip, c.info.SipReason)
	ring := a.After
	if a.Status == StatusNoAnswer || ring >= c.opts.RingTimeout {
		// Unanswered: jambonz cancels the INVITE at the request's timeout.
		ring, a.Status, a.SIPStatus = c.opts.RingTimeout, StatusNoAnswer, 487
	}
	if !c.spend(ctx, ring) && !c.ended && ctx.Err() != nil {
		c.endCanceled()
	}
	if c.ended {
		return false
	}
	if a.Status == StatusCompleted {
		c.answer(ctx)
		return !c.ended
	}
	switch {
	case a.SIPStatus == 486 || a.SIPStatus == 603:
		a.Status = StatusBusy
	case a.SIPStatus == 487:
		a.Status = StatusNoAnswer
	default:
		a.Status = StatusFailed
	}
	c.end(a.Status, ReasonNotAnswered, a.SIPStatus)
	return false
}

// finishApps sends the final status notification and releases the application,
// and the one a handover kept for the notifications (notifier).
func (c *callRun) finishApps(ctx context.Context) {
	n := c.statusApp()
	n.finish(ctx)
	if c.app != n {
		c.app.release(ctx)
	}
}

// execute runs verbs until the call ends.
func (c *callRun) execute(ctx context.Context) {
	for !c.ended {
		if ctx.Err() != nil {
			c.endCanceled()
			return
		}
		if c.overLimit() {
			return
		}
		c.app.between(ctx)
		c.applyControls(ctx)
		if c.ended {
			return
		}
		if len(c.queue) == 0 {
			more, reason := c.app.exhausted(ctx)
			if c.ended {
				return
			}
			if !more {
				c.hangup(reason)
				return
			}
			continue
		}
		c.cut = false
		v := c.queue[0]
		c.queue = c.queue[1:]
		c.result.Verbs = append(c.result.Verbs, v.Name())
		c.recordVerb(KindVerbStart, v.Name())
		c.reportVerb(ctx, v, "starting")
		c.current = v
		c.runVerb(ctx, v)
		c.current = nil
		c.recordVerb(KindVerbEnd, v.Name())
		c.reportVerb(ctx, v, "finished")
	}
}

// taskName is the name jambonz's task for v reports: the verb's, but for llm (and
// s2s and its vendor shortcuts, normalised to llm) the vendor task's TaskName, which
// lib/tasks/llm/index.js's name getter returns (Llm_OpenAI_s2s, Llm_VoiceAgent_s2s,
// Llm_Ultravox_s2s, Llm_Elevenlabs_s2s, Llm_Google_s2s: lib/tasks/llm/llms/*.js).
func taskName(v verbs.Verb) string {
	if l, ok := v.(*verbs.Llm); ok {
		return vendorOf(l).task
	}
	return v.Name()
}

func (c *callRun) reportVerb(ctx context.Context, v verbs.Verb, event string) {
	if !c.notifyEvents {
		return
	}
	// jambonz's call session reports the task's start and end with its name
	// (lib/session/call-session.js _notifyTaskStatus); the verbs' own events carry
	// verb instead.
	data := map[string]any{"name": taskName(v), "event": event}
	if id := v.ID(); id != "" {
		data["id"] = id
	}
	c.app.verbStatus(ctx, data)
}

// log starts a log event of the call. (A logger with the call_sid in its context
// would cost every live call half a kilobyte.)
func (c *callRun) log(level zerolog.Level) *zerolog.Event {
	return c.opts.Logger.WithLevel(level).Str("call_sid", c.info.CallSid)
}

// The record helpers build an Event in their own short-lived frame: a live call
// sits waiting deep in these functions for minutes, and Event literals in every
// frame on that path would keep its goroutine stack from shrinking.

//go:noinline
func (c *callRun) recordStart() {
	c.record(Event{Kind: KindCallStart, From: c.info.From, To: c.info.To, Direction: c.info.Direction})
}

//go:noinline
func (c *callRun) recordEnd() {
	r := &c.result
	c.record(Event{Kind: KindCallEnd, Status: string(r.Status), Reason: r.Reason, SIPStatus: r.SIPStatus})
}

//go:noinline
func (c *callRun) recordVerb(k Kind, verb string) { c.record(Event{Kind: k, Verb: verb}) }

//go:noinline
func (c *callRun) recordMsg(k Kind, typ, id string) { c.record(Event{Kind: k, Type: typ, MsgID: id}) }

//go:noinline
func (c *callRun) recordStatus(s Status) { c.record(Event{Kind: KindCallStatus, Status: string(s)}) }

//go:noinline
func (c *callRun) recordClose(code int) { c.record(Event{Kind: KindWSClose, Code: code}) }

// recordNetwork states the network faults that apply to every message, at the start.
func (c *callRun) recordNetwork() {
	n := c.opts.Script.Network
	if n.Latency > 0 || n.Jitter > 0 {
		c.record(Event{Kind: KindFault, Fault: "latency", Delay: n.Latency, Jitter: n.Jitter})
	}
	if n.SlowApp > 0 {
		c.record(Event{Kind: KindFault, Fault: "slow-app", Delay: n.SlowApp})
	}
}

// netConnect is the transport.ConnectFunc of the call's faulty network; nil without
// one, and the call's connections are the shared clients' own.
func (c *callRun) netConnect() transport.ConnectFunc {
	if c.net == nil {
		return nil
	}
	return c.net.Connect
}

// recordFaults records the faults injected on the connection of an attempt to url,
// just before its hook.attempt.
func (c *callRun) recordFaults(url string, attempt int) {
	if c.net == nil {
		return
	}
	for _, n := range c.net.Notes() {
		c.record(Event{Kind: KindFault, Fault: n.Fault, URL: url, Attempt: attempt})
	}
}

//go:noinline
func (c *callRun) recordInput(input, value string) {
	c.record(Event{Kind: KindCallerInput, Input: input, Value: value})
}

// elapsed is the call's time since it started.
func (c *callRun) elapsed() time.Duration { return c.clock.Now().Sub(c.start) }

// record appends an event stamped with the call's clock.
func (c *callRun) record(e Event) {
	e.At = c.elapsed()
	e.CallSid = c.result.CallSid // the call's, also while a dialed leg's confirm verbs run
	if (e.Kind == KindMsgSent || e.Kind == KindMsgRecv) && c.peers != nil && !c.quotable() {
		// A message's data is the application's, or (jambonz:error) quotes it.
		e.Data = unquotedData(e.Data, c.notQuoted())
		if e.Command != "" && !wssession.KnownCommand(e.Command) {
			e.Command = "(unknown)"
		}
	}
	if e.Kind == KindHookAttempt || e.Kind == KindMsgSent {
		c.requests++
	}
	c.timeline.add(e, c.result.CallSid)
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(e)
	}
}

// overLimit ends the call, and reports so, once it sent Options.MaxRequests
// requests or its timeline holds Options.MaxEvents events: a runaway application
// (one that redirects to itself, a WebSocket app that floods commands) ends with a
// clear reason, and the call's record and memory stay bounded. It is checked
// between verbs and between the messages handled while media plays, where ending
// the call is safe.
func (c *callRun) overLimit() bool {
	if c.ended {
		return true
	}
	var reason string
	switch {
	case c.requests >= c.opts.MaxRequests:
		reason = ReasonMaxRequests
	case c.timeline.len() >= c.opts.MaxEvents:
		reason = ReasonMaxEvents
	default:
		return false
	}
	c.log(zerolog.WarnLevel).Int("requests", c.requests).Int("events", c.timeline.len()).Str("reason", reason).
		Msg("the call reached its limit and ends")
	c.hangup(reason)
	return true
}

// alert raises an alert on the account and records it.
func (c *callRun) alert(t AlertType, url, detail string) {
	// One line: joined errors (a failure and the context's end) carry newlines.
	detail = strings.ReplaceAll(detail, "\n", "; ")
	c.result.Alerts = append(c.result.Alerts, Alert{Type: t, URL: url, Detail: detail})
	// The URL rides on the event for embedders (a node's alert records); the alert
	// line of the --json contract has only type and detail.
	c.record(Event{Kind: KindAlert, AlertType: t, URL: url, Detail: detail})
	c.log(zerolog.WarnLevel).Str("alert", string(t)).Str("url", url).Msg(detail) // an operator should look
}

// setStatus changes the call status, records it and notifies the application.
func (c *callRun) setStatus(ctx context.Context, s Status, sip int, reason string) {
	c.info.CallStatus, c.info.SipStatus, c.info.SipReason = s, sip, reason
	c.recordStatus(s)
	if c.app != nil {
		c.statusApp().notify(ctx, c.info.fields())
	}
}

// answer answers the call (the first verb that needs media does).
func (c *callRun) answer(ctx context.Context) {
	if c.answered || c.ended {
		return
	}
	c.answered = true
	c.result.Answered = true
	c.setStatus(ctx, StatusInProgress, 200, "OK")
}

// hangup ends a call the normal way: completed if answered.
func (c *callRun) hangup(reason string) {
	switch {
	case c.answered:
		c.end(StatusCompleted, reason, 200)
	case reason == ReasonCallerHangup:
		// The caller gave up before the call was answered: a CANCEL, 487.
		c.end(StatusNoAnswer, reason, 487)
	default:
		c.end(StatusFailed, reason, 603)
	}
}

// endCanceled ends a call whose context ended: an answered call is hung up (200), an
// unanswered one is a canceled INVITE (487). The reason is canceledReason's.
func (c *callRun) endCanceled() {
	if c.answered {
		c.end(StatusCompleted, canceledReason(c.ctx), 200)
		return
	}
	if errors.Is(context.Cause(c.ctx), ErrNoAnswer) {
		c.end(StatusNoAnswer, canceledReason(c.ctx), 487)
		return
	}
	c.end(StatusFailed, canceledReason(c.ctx), 487)
}

// canceledReason is the call.end reason of a call whose context ended: the text of
// the context's cause when it has its own (context.WithCancelCause: a node hanging up
// by API, or draining), otherwise ReasonCanceled.
func canceledReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return ReasonCanceled
	}
	return cause.Error()
}

// end ends the call once. The application gets the final status in finish; the
// call.end event is recorded last, by run.
func (c *callRun) end(s Status, reason string, sip int) {
	if c.ended {
		return
	}
	c.ended = true
	c.queue = nil
	if s == StatusCompleted {
		up := c.elapsed()
		if reason == ReasonCallerHangup {
			// An adulted leg's far end hanging up: jambonz counts from the leg's
			// answer (place-outdial.js); its own hangups from the adulting
			// (call-session.js wrapDialog).
			up += c.upBefore
		}
		d := int(up.Round(time.Second) / time.Second)
		c.info.Duration = &d
		// Who ended the dialog: the caller's BYE, or jambonz destroying it
		// (lib/session/call-session.js wrapDialog, inbound-call-session.js _hangup).
		c.info.CallTerminationBy = "jambonz"
	}
	if reason == ReasonCallerHangup {
		c.info.CallTerminationBy = "caller" // a BYE, or the caller's CANCEL (_onCancel)
	}
	if sip != c.info.SipStatus {
		c.info.SipReason = sipReason(sip)
	}
	c.info.CallStatus, c.info.SipStatus = s, sip
	c.recordStatus(s)
	c.result.Status, c.result.Reason, c.result.SIPStatus = s, reason, sip
}

// sipReason is the reason phrase of a SIP final status (RFC 3261 §21), for the call
// info's sip_reason once the call ends.
func sipReason(sip int) string {
	switch sip {
	case 200:
		return "OK"
	case 408:
		return "Request Timeout"
	case 480:
		return "Temporarily Unavailable"
	case 486:
		return "Busy Here"
	case 487:
		return "Request Terminated"
	case 600:
		return "Busy Everywhere"
	case 603:
		return "Decline"
	case 604:
		return "Does Not Exist Anywhere"
	case 606:
		return "Not Acceptable"
	}
	// The other 4xx and 5xx phrases are HTTP's (404 Not Found, 503 Service Unavailable...).
	return http.StatusText(sip)
}

// deadline is the simulated time at which the call ends on its own: the caller's
// hangup or the maximum length, whichever comes first.
func (c *callRun) deadline() (time.Duration, string) {
	limit, reason := c.opts.MaxDuration, ReasonMaxDuration
	if h := c.opts.Script.HangupAfter; h > 0 && h <= limit {
		limit, reason = h, ReasonCallerHangup
	}
	return limit, reason
}

// checkDeadline ends the call if real time spent on the network passed the deadline.
func (c *callRun) checkDeadline() bool {
	if limit, reason := c.deadline(); c.elapsed() >= limit && !c.ended {
		c.hangup(reason)
	}
	return !c.ended
}

// payload is the call info plus extra keys for a hook.
func (c *callRun) payload(extra map[string]any) map[string]any {
	m := c.info.fields()
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func newUUID() string { return uuid.NewString() }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
