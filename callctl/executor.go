package callctl

import (
	"context"
	"github.com/switchboard-voice/switchboard/fragment"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// runVerb executes one verb with simulated media.
func (c *callRun) runVerb(ctx context.Context, v verbs.Verb) {
	if names, source := verbs.Ignored(v); names != nil {
		c.compat(CompatIgnoredProperty, "%s %s: jambonz never reads %s (%s): it has no effect there",
			v.Name(), propertyWord(len(names)), strings.Join(names, ", "), source)
	}
	switch v := v.(type) {
	case *verbs.Say:
		if v.Stream || c.ai.autoStream {
			c.streamingSay(ctx, v)
			return
		}
		c.answerUnless(ctx, v.EarlyMedia)
		if c.spend(ctx, sayDuration(v)) {
			c.recordSpoken("say", strings.Join(v.Text, " "))
		}
	case *verbs.Play:
		c.answerUnless(ctx, v.EarlyMedia)
		if v.TimeoutSecs > 0 {
			c.nodeTimer("play timeoutSecs", v.TimeoutSecs)
		}
		d := playDuration(v)
		if c.spend(ctx, d) {
			c.actionHook(ctx, v.ActionHook, map[string]any{
				"reason": "playCompleted", "playback_seconds": int(d / time.Second),
				"playback_milliseconds": d.Milliseconds(),
			})
		}
	case *verbs.Pause:
		c.spend(ctx, c.nodeTimer("pause length", v.Length))
	case *verbs.Gather:
		c.gather(ctx, v)
	case *verbs.Dial:
		c.dial(ctx, v)
	case *verbs.Redirect:
		c.redirectVerb(ctx, v)
	case *verbs.Hangup:
		c.hangup(ReasonAppHangup)
	case *verbs.Answer:
		c.answer(ctx)
	case *verbs.Alert:
		// jambonz raises an application alert on the account with the verb's
		// message (lib/tasks/alert.js); the call's state does not change.
		c.alert(AlertApplication, "", v.Message)
	case *verbs.SipDecline:
		c.decline(v)
	case *verbs.Tag:
		// jambonz replaces customerData with the tag's data; later hooks carry it.
		c.info.CustomerData = v.Data
	case *verbs.Config:
		c.setRecognizer(v.Recognizer)
		c.configure(ctx, v)
		c.notifyEvents = c.notifyEvents || v.NotifyEvents
		for _, r := range v.Reset {
			if r == "notifyEvents" {
				c.notifyEvents = false
			}
		}
	case *verbs.Dtmf:
		per := 500 * time.Millisecond
		if v.Duration > 0 {
			per = seconds(v.Duration / 1000)
		}
		c.spend(ctx, mulDuration(per, len(v.Dtmf)))
	case *verbs.Conference:
		c.conference(ctx, v)
	case *verbs.Enqueue:
		c.enqueue(ctx, v)
	case *verbs.Dequeue:
		c.dequeue(ctx, v)
	case *verbs.Dialogflow:
		c.bot(ctx, v.Name(), v.ActionHook, v.EventHook)
	case *verbs.Lex:
		c.bot(ctx, v.Name(), v.ActionHook, v.EventHook)
	case *verbs.Rasa:
		c.bot(ctx, v.Name(), v.ActionHook, v.EventHook)
	case *verbs.RestDial:
		c.restDial(ctx, v)
	case *verbs.Listen:
		c.answerUnless(ctx, v.EarlyMedia)
		if v.MaxLength > 0 {
			if c.spend(ctx, c.nodeTimer("listen maxLength", v.MaxLength)) {
				c.actionHook(ctx, v.ActionHook, nil)
			}
			break
		}
		// listen.js: without maxLength the stream lasts until the call ends or the
		// verb is killed (its socket, simulated, never closes on its own).
		c.hold(ctx, func() bool { return false })
	case *verbs.Llm:
		c.llm(ctx, v)
	case *verbs.Message:
		c.actionHook(ctx, v.ActionHook, map[string]any{"message_sid": newUUID(), "message_status": "success"})
	case *verbs.SipRefer:
		c.actionHook(ctx, v.ActionHook, map[string]any{"refer_status": 202, "final_referred_call_status": 200})
	case *verbs.SipRequest:
		c.actionHook(ctx, v.ActionHook, map[string]any{"result": "success", "sip_status": 200, "sip_reason": "OK"})
	case *verbs.Transcribe:
		c.transcribe(ctx, v)
	case *verbs.Dub, *verbs.Leave:
		// No audio, no queue or conference to leave: nothing to simulate.
	default:
		c.log(zerolog.WarnLevel).Str("verb", v.Name()).Msg("verb not simulated")
	}
}

// propertyWord is "property" or "properties" for n of them.
func propertyWord(n int) string {
	if n == 1 {
		return "property"
	}
	return "properties"
}

// actionHook requests a verb's action hook; verbs it returns replace the remaining
// ones. A failed hook was alerted by the app: the call goes on with what it has.
func (c *callRun) actionHook(ctx context.Context, h *verbs.Hook, extra map[string]any) (ok bool) {
	return c.actionHookAs(ctx, wssession.MsgVerbHook, h, extra)
}

// actionHookAs is actionHook with the WebSocket message type to send it as. The
// payload carries verb_id when the verb has an id, as jambonz's performAction adds it.
func (c *callRun) actionHookAs(ctx context.Context, typ string, h *verbs.Hook, extra map[string]any) (ok bool) {
	if h == nil || c.ended || c.cut {
		return true
	}
	payload := c.payload(extra)
	if c.current != nil && c.current.ID() != "" {
		payload["verb_id"] = c.current.ID()
	}
	ans, ok := c.app.hook(ctx, typ, h, payload)
	if ok {
		c.takeAnswer(ctx, c.current, ans)
	}
	c.checkDeadline()
	return ok
}

// redirectVerb runs the redirect verb as jambonz's lib/tasks/redirect.js does
// (docs/compatibility.md §6). Its hook goes as session:redirect over a WebSocket.
// An absolute URL in a WebSocket application hands the call to a new requestor
// there: a ws(s) URL opens a new WebSocket whose first message is session:redirect,
// an http(s) one is requested as a webhook and the call's application becomes HTTP;
// either way the old socket stays open and keeps getting call:status, as jambonz's
// notifier does. In an HTTP application an absolute URL of another scheme or host
// moves the call's base there (a ws(s) URL opens a WebSocket with session:new). A
// statusHook moves an HTTP application's status notifications.
func (c *callRun) redirectVerb(ctx context.Context, v *verbs.Redirect) {
	h := v.ActionHook
	if url := hookURL(v.StatusHook); url != "" {
		if _, isWS := c.statusApp().(*wsApp); isWS {
			c.compat(CompatIgnoredProperty, "redirect statusHook in a WebSocket application: jambonz opens a new WebSocket there for the call's status notifications only; Switchboard keeps sending them on the application's socket")
		} else {
			c.moveStatusHook(StatusHook{URL: url})
		}
	}
	payload := c.payload(nil)
	if id := v.ID(); id != "" {
		payload["verb_id"] = id
	}
	var ans answer
	var ok bool
	t, err := fragment.Resolve(c.opts.app, h.URL)
	switch app := c.app.(type) {
	case *wsApp:
		if !isAbsolute(h.URL) || err != nil {
			ans, ok = app.hook(ctx, wssession.MsgSessionRedirect, h, payload)
			break
		}
		c.keepNotifier(app)
		c.compat(CompatStatusToOldApp, "the redirect verb moved the call to %s: jambonz keeps sending call:status to the application it left, whose socket stays open until the call ends", t.Clean())
		c.opts.app = t
		if t.Policy.Transport == fragment.HTTP {
			c.app = newHTTPApp(c)
			ans, ok = c.app.hook(ctx, wssession.MsgSessionRedirect, h, payload)
			break
		}
		next := newWSApp(c)
		c.app = next
		hook, _, _ := strings.Cut(h.URL, "#")
		ans, ok = next.first(ctx, wssession.MsgSessionRedirect, hook, payload)
	case *httpApp:
		if !isAbsolute(h.URL) || err != nil || !c.otherApp(t) {
			ans, ok = app.hook(ctx, wssession.MsgSessionRedirect, h, payload)
			break
		}
		c.opts.app = t
		if t.Policy.Transport == fragment.HTTP {
			c.app = newHTTPApp(c)
			ans, ok = c.app.hook(ctx, wssession.MsgSessionRedirect, h, payload)
			break
		}
		// An HTTP requestor given a ws(s) URL switches to a WebSocket and sends
		// session:new there (lib/utils/http-requestor.js); the status hook stays.
		c.keepNotifier(app)
		next := newWSApp(c)
		c.app = next
		ans, ok = next.first(ctx, wssession.MsgSessionNew, "", payload)
	}
	if c.ended {
		return
	}
	if !ok || ans.err != nil {
		// The redirect task throws, and jambonz's call session stops running tasks:
		// the call ends (lib/session/call-session.js exec).
		if ans.err != nil {
			c.alert(AlertInvalidAppPayload, ans.url, "actionHook returned invalid verb syntax: "+ans.err.Error())
		}
		c.hangup(ReasonRedirectFailed)
		return
	}
	c.takeAnswer(ctx, v, ans)
	c.checkDeadline()
}

// hookURL is the URL of a hook given as a string or an object with a url.
func hookURL(h any) string {
	switch h := h.(type) {
	case string:
		return h
	case map[string]any:
		url, _ := h["url"].(string)
		return url
	}
	return ""
}

// sideHook requests a hook whose verbs do not change the call's course (wait,
// enter, partial result, status hooks): their verbs would play to the waiting
// caller, which has no effect without audio.
func (c *callRun) sideHook(ctx context.Context, h *verbs.Hook, extra map[string]any) bool {
	return c.sideHookAs(ctx, wssession.MsgVerbHook, h, extra)
}

// unreadHook requests a hook whose answer jambonz's code never reads (what names it):
// its requestor's promise is only caught, so verbs answered there, valid or not, run
// nowhere and raise no alert; a compat warning says so.
func (c *callRun) unreadHook(ctx context.Context, h *verbs.Hook, payload map[string]any, what string) {
	if h == nil || c.ended || c.cut {
		return
	}
	ans, ok := c.app.hook(ctx, wssession.MsgVerbHook, h, payload)
	if ok && (len(ans.verbs) > 0 || ans.err != nil) {
		c.compat(CompatAnswerIgnored, "%s %s answered verbs: jambonz never reads that hook's answer, and runs none of them", what, ans.url)
	}
	c.checkDeadline()
}

func (c *callRun) sideHookAs(ctx context.Context, typ string, h *verbs.Hook, extra map[string]any) bool {
	if h == nil || c.ended || c.cut {
		return true
	}
	ans, ok := c.app.hook(ctx, typ, h, c.payload(extra))
	if ok && ans.err != nil {
		c.alert(AlertInvalidAppPayload, ans.url, "hook returned invalid verb syntax: "+ans.err.Error())
		ok = false
	}
	c.checkDeadline()
	return ok
}

func (c *callRun) gather(ctx context.Context, g *verbs.Gather) {
	c.answer(ctx)
	prompt := time.Duration(0)
	if g.Say != nil {
		prompt += sayDuration(g.Say)
	}
	if g.Play != nil {
		prompt += playDuration(g.Play)
	}
	var in GatherInput
	if c.gatherNext < len(c.opts.Script.Gathers) {
		in = c.opts.Script.Gathers[c.gatherNext]
	}
	c.gatherNext++
	wantsSpeech := contains(g.Input, "speech")
	wantsDigits := len(g.Input) == 0 || contains(g.Input, "digits")
	after := in.After
	if after == 0 {
		after = defaultInputDelay
	}
	if in.Speech != "" && wantsSpeech {
		rec := c.recognizerFor(g.Recognizer)
		if !c.spend(ctx, prompt+after) {
			return
		}
		c.recordInput("speech", in.Speech)
		if g.PartialResultHook != nil {
			if partial := strings.Fields(in.Speech); len(partial) > 1 {
				// gather.js _onTranscription: an interim result goes to the
				// partialResultHook, whose answer jambonz never reads.
				c.unreadHook(ctx, g.PartialResultHook, c.payload(map[string]any{
					"speech": speechEvent(rec, partial[0], false, 0.5)}), "the gather's partialResultHook")
			}
		}
		c.gatherAction(ctx, g, map[string]any{"reason": "speechDetected", "speech": speechEvent(rec, in.Speech, true, 0.92)})
		return
	}
	keys := ""
	if wantsDigits {
		keys = in.Digits
	}
	if g.Timeout != nil && *g.Timeout != 0 {
		c.nodeTimer("gather timeout", *g.Timeout)
	}
	if g.InterDigitTimeout > 0 {
		c.nodeTimer("gather interDigitTimeout", g.InterDigitTimeout)
	}
	out := collectDigits(g, keys, after, in.keyInterval())
	if !c.spend(ctx, addDuration(prompt, out.at)) {
		return
	}
	if out.keyed != "" {
		c.recordInput("digits", out.keyed)
		if !out.digits {
			c.compat(CompatGatherDigitsLost, "the caller keyed %s but the gather (no numDigits, maxDigits or finishOnKey reached, no minDigits) timed out: jambonz reports reason timeout without the digits", out.keyed)
		}
	}
	if !out.digits {
		c.gatherAction(ctx, g, map[string]any{"reason": "timeout"})
		return
	}
	c.gatherAction(ctx, g, map[string]any{"reason": "dtmfDetected", "digits": out.buffer})
}

// gatherOutcome is how a gather of digits ends (collectDigits): at, after the prompt;
// with the digits collected (reason dtmfDetected) or a timeout; keyed is what the
// caller keyed until then, the finishOnKey among it.
type gatherOutcome struct {
	at     time.Duration
	digits bool
	buffer string
	keyed  string
}

// forever stands for a gather that never ends on its own (timeout 0, no digit rule
// met): the call's deadline ends it. Durations saturate there (addDuration, seconds)
// rather than overflow into the past.
const forever = time.Duration(1<<63 - 1)

// nodeTimerMax is the longest delay Node's setTimeout keeps, 2^31-1 ms: a longer one,
// like one under 1 ms, is set to 1 ms (Node's timers documentation, setTimeout).
const nodeTimerMax = (1<<31 - 1) * time.Millisecond

// nodeDelay is the delay of jambonz's setTimeout(fn, secs * 1000): secs, unless
// Node sets it to 1 ms (beyond nodeTimerMax, under 1 ms).
func nodeDelay(secs float64) time.Duration {
	ms := secs * 1000
	if ms >= 1 && ms <= float64(nodeTimerMax/time.Millisecond) {
		return seconds(secs)
	}
	return time.Millisecond
}

// nodeTimer is nodeDelay, with a compat warning naming what (a verb's property)
// when Node's limit makes the timer fire at once.
func (c *callRun) nodeTimer(what string, secs float64) time.Duration {
	if secs*1000 > float64(nodeTimerMax/time.Millisecond) {
		c.compat(CompatTimerOverflow, "%s of %g s is beyond Node's setTimeout limit (2^31-1 ms, about 24.8 days): jambonz's timer fires after 1 ms", what, secs)
	}
	return nodeDelay(secs)
}

// addDuration is a+b for non-negative durations, saturating at forever.
func addDuration(a, b time.Duration) time.Duration {
	if a > forever-b {
		return forever
	}
	return a + b
}

// mulDuration is d*n for non-negative d and n, saturating at forever.
func mulDuration(d time.Duration, n int) time.Duration {
	if n > 0 && d > forever/time.Duration(n) {
		return forever
	}
	return d * time.Duration(n)
}

// collectDigits plays jambonz's digit collection (lib/tasks/gather.js _onDtmf,
// _startTimer) against the caller's keys, keyed from first after the prompt, then one
// every interval. The timeout (default 15 s, 0 none: "timeout of zero means no
// timeout" in gather.js) runs from the prompt's end; it and interDigitTimeout are
// Node timers (nodeDelay: beyond 2^31-1 ms they fire at once).
// finishOnKey ends the gather with the digits before it, which it does not join;
// numDigits or maxDigits digits end it at once. interDigitTimeout is started by a key
// only once minDigits digits were keyed, and then replaces the timeout: with no
// minDigits it never starts, as in jambonz. When the timeout passes, the gather
// reports the digits if minDigits were keyed, else a timeout (with no digits).
func collectDigits(g *verbs.Gather, keys string, first, interval time.Duration) gatherOutcome {
	timeout := 15 * time.Second
	if g.Timeout != nil {
		timeout = 0
		if *g.Timeout != 0 {
			timeout = nodeDelay(*g.Timeout)
		}
	}
	deadline := forever // the timer running: the timeout, then the inter-digit one
	if timeout > 0 {
		deadline = timeout
	}
	var buffer, keyed string
	enough := func() bool { return g.MinDigits > 0 && len(buffer) >= g.MinDigits }
	onTimeout := func(at time.Duration, interDigit bool) gatherOutcome {
		return gatherOutcome{at: at, digits: interDigit || enough(), buffer: buffer, keyed: keyed}
	}
	interDigit := false
	for i, k := range keys {
		at := addDuration(first, mulDuration(interval, i))
		if at >= deadline {
			return onTimeout(deadline, interDigit)
		}
		keyed += string(k)
		if string(k) == g.FinishOnKey {
			return gatherOutcome{at: at, digits: true, buffer: buffer, keyed: keyed}
		}
		buffer += string(k)
		if len(buffer) == g.NumDigits || len(buffer) == g.MaxDigits {
			return gatherOutcome{at: at, digits: true, buffer: buffer, keyed: keyed}
		}
		if g.InterDigitTimeout > 0 && enough() {
			deadline, interDigit = addDuration(at, nodeDelay(g.InterDigitTimeout)), true
		}
	}
	return onTimeout(deadline, interDigit)
}

// decline runs sip:decline as lib/tasks/sip_decline.js does: the INVITE is
// rejected with the verb's status and reason, and the call is failed, whatever the
// status; without a reason the call keeps the sip_reason it had. An answered call
// cannot be rejected: the verb's precondition fails and jambonz skips it.
func (c *callRun) decline(v *verbs.SipDecline) {
	if c.answered {
		c.log(zerolog.WarnLevel).Int("status", v.Status).Msg("sip:decline on an answered call skipped")
		return
	}
	reason := c.info.SipReason
	if v.Reason != "" {
		reason = v.Reason
	}
	c.end(StatusFailed, ReasonDeclined, v.Status)
	c.info.SipReason = reason
}

// answerUnless answers the call unless the verb asks for early media: then it plays
// before the answer, as jambonz sends 183 Session Progress (no status change) and
// answers only when a verb without earlyMedia needs media; an HTTP call that ends
// unanswered is then declined with 603 (lib/session/call-session.js
// _evalEndpointPrecondition).
func (c *callRun) answerUnless(ctx context.Context, earlyMedia bool) {
	if !earlyMedia {
		c.answer(ctx)
	}
}

func sayDuration(s *verbs.Say) time.Duration {
	chars := 0
	for _, t := range s.Text {
		chars += len(t)
	}
	d := max(time.Duration(chars)*speechPerCharacter, minimumSayDuration)
	return loops(d, s.Loop)
}

// playDuration is how long a play lasts: each URL its timeoutSecs (play.js's timer,
// a Node timer: nodeDelay), or defaultPlayDuration, times its loops.
func playDuration(p *verbs.Play) time.Duration {
	per := defaultPlayDuration
	if p.TimeoutSecs > 0 {
		per = nodeDelay(p.TimeoutSecs)
	}
	return loops(mulDuration(per, max(len(p.URL), 1)), p.Loop)
}

// loops multiplies one pass by the loop count; "forever" lasts until the call ends.
func loops(d time.Duration, n int) time.Duration {
	switch {
	case n == verbs.LoopForever:
		return defaultMaxDuration * 2
	case n > 1:
		return mulDuration(d, n)
	}
	return d
}

// seconds converts a verb's seconds, saturating at forever: a float beyond int64's
// range would convert to an undefined (on amd64 negative) duration.
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= float64(forever) {
		return forever
	}
	return time.Duration(ns)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
