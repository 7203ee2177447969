package callctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// The verbs that connect the caller to someone else, with the far end of Script:
// dial (lib/tasks/dial.js, lib/utils/place-outdial.js), conference
// (lib/tasks/conference.js), enqueue and dequeue (lib/tasks/enqueue.js,
// dequeue.js), the bots (dialogflow, lex, rasa) and rest:dial.

// dial places the dialed leg, reports its statuses to the application with the
// leg's own call info (place-outdial.js _notifyCallStatusChange), runs its confirm
// hook on the leg (dial:confirm; the verbs it returns play to the callee, whose
// answers come from DialOutcome.Confirm), then bridges: amd events, DTMF for the
// dtmfHook, a REFER for the referHook; finally the actionHook.
func (c *callRun) dial(ctx context.Context, d *verbs.Dial) {
	var out DialOutcome
	if c.dialNext < len(c.opts.Script.Dials) {
		out = c.opts.Script.Dials[c.dialNext]
	}
	c.dialNext++
	out = out.withDefaults()
	if !d.AnswerOnBridge {
		c.answer(ctx)
	}
	timeout := defaultDialTimeout
	if d.Timeout > 0 {
		timeout = c.nodeTimer("dial timeout", d.Timeout) // dial.js timerRing
	}
	ring := min(defaultDialRing, timeout)
	if out.Status == StatusNoAnswer {
		ring = timeout
	}
	leg := c.dialedLeg(d)
	results := map[string]any{}
	legStatus := func(s Status, sip int, reason string) {
		leg.CallStatus, leg.SipStatus, leg.SipReason = s, sip, reason
		c.app.notify(ctx, leg.fields())
		if s != StatusTrying {
			results["dial_call_status"], results["dial_sip_status"] = string(s), sip
			results["dial_call_sid"], results["dial_sbc_callid"] = leg.CallSid, leg.SbcCallID
		}
	}
	legStatus(StatusTrying, 100, "Trying")
	legStatus(StatusRinging, 180, "Ringing")
	if !c.spend(ctx, ring) {
		return
	}
	if out.Status != StatusCompleted {
		legStatus(out.Status, out.SIPStatus, sipReason(out.SIPStatus))
		c.actionHook(ctx, d.ActionHook, results)
		return
	}
	legStatus(StatusInProgress, 200, "OK")
	if h := dialConfirmHook(d); h != nil {
		if !c.confirmLeg(ctx, h, &leg, out.Confirm) {
			// Declined (a hangup verb, a failed hook, a verb the confirm leg may not
			// run): place-outdial.js _executeApp emits decline and jambonz hangs the
			// leg up itself, so no completed status is sent for it; dial.js's decline
			// handler drops the leg's listeners, so the actionHook reports the status
			// the leg had, in-progress 200, without a duration.
			if !c.ended {
				c.actionHook(ctx, d.ActionHook, results)
			}
			return
		}
	}
	if c.ended {
		return
	}
	c.answer(ctx)
	results["dial_call_status"], results["dial_sip_status"] = string(StatusCompleted), 200
	duration := out.Duration
	if d.TimeLimit > 0 {
		// dial.js timerMaxCallDuration, a Node timer.
		duration = min(duration, c.nodeTimer("dial timeLimit", d.TimeLimit))
	}
	start := c.elapsed()
	gen := c.generation
	bridge := &dialState{verb: d, leg: &leg, out: out, answered: start, end: start + duration}
	c.dialing = bridge
	c.bridgeEvents(ctx, d, out, &leg, start+duration)
	if !c.ended && c.generation == gen && !c.cut {
		c.spend(ctx, max(start+duration-c.elapsed(), 0))
	}
	c.dialing = nil
	if c.ended {
		return
	}
	if bridge.adulted {
		// _lccCallHook kills the dial once its leg adulted (dial.js on adulting
		// detached it): the actionHook reports the leg as it was when answered,
		// completed 200 without a duration, and its later statuses go to the leg's
		// own session.
		cut := c.cut
		c.cut = false
		c.actionHook(ctx, d.ActionHook, results)
		c.cut = cut
		return
	}
	secs := int((c.elapsed() - start) / time.Second)
	leg.Duration = &secs
	legStatus(StatusCompleted, 200, "OK")
	results["dial_call_status"], results["dial_sip_status"] = string(StatusCompleted), 200
	results["duration"] = secs
	cut := c.cut
	c.cut = false
	c.actionHook(ctx, d.ActionHook, results)
	c.cut = cut
}

// dialState is the dial whose legs are bridged (live call control's
// child_call_hook).
type dialState struct {
	verb *verbs.Dial
	leg  *CallInfo
	out  DialOutcome
	// answered and end are the call times the leg answered and hangs up.
	answered, end time.Duration
	// adulted: a child_call_hook made the leg a session of its own.
	adulted bool
}

// dialedLeg is the call info of a dial's outbound leg: its own call_sid, outbound,
// its parent's call_sid (call-info.js, direction outbound).
func (c *callRun) dialedLeg(d *verbs.Dial) CallInfo {
	to := ""
	if len(d.Target) > 0 {
		t := d.Target[0]
		to = t.Number + t.SipURI + t.Name
	}
	from := d.CallerID
	if from == "" {
		from = c.info.From
	}
	return CallInfo{
		CallSid: newUUID(), Direction: "outbound", From: from, To: to, CallID: newUUID(), SbcCallID: newUUID(),
		CallerID: from, AccountSid: c.info.AccountSid, ApplicationSid: c.info.ApplicationSid, TraceID: c.info.TraceID,
		FsSipAddress: c.info.FsSipAddress, ParentCallSid: c.info.CallSid, CustomerData: d.Tag,
	}
}

func dialConfirmHook(d *verbs.Dial) *verbs.Hook {
	for _, t := range d.Target {
		if t.ConfirmHook != nil {
			return t.ConfirmHook
		}
	}
	return d.ConfirmHook
}

// confirmLeg requests the confirm hook with the leg's call info (dial:confirm) and
// runs the verbs it returns on the callee's leg, the callee answering its gathers
// from inputs (place-outdial.js _executeApp: only verbs that need no other call are
// allowed; a hangup, a failed hook or another verb declines the call). It reports
// whether the callee accepted.
func (c *callRun) confirmLeg(ctx context.Context, h *verbs.Hook, leg *CallInfo, inputs []GatherInput) bool {
	vs, _, ok := c.hookVerbs(ctx, wssession.MsgDialConfirm, h, leg.fields())
	c.checkDeadline()
	if !ok || c.ended {
		return false
	}
	// The confirm session runs on the leg: its hooks carry the leg's call info.
	parent, queue, gatherNext, gathers := c.info, c.queue, c.gatherNext, c.opts.Script.Gathers
	c.info, c.gatherNext, c.opts.Script.Gathers = *leg, 0, inputs
	defer func() {
		*leg = c.info
		c.info, c.queue, c.gatherNext, c.opts.Script.Gathers = parent, queue, gatherNext, gathers
	}()
	c.queue = vs
	for len(c.queue) > 0 && !c.ended {
		v := c.queue[0]
		c.queue = c.queue[1:]
		switch v.(type) {
		case *verbs.Hangup:
			return false
		case *verbs.Say, *verbs.Play, *verbs.Gather, *verbs.Pause, *verbs.Tag, *verbs.Answer, *verbs.Config, *verbs.Dtmf:
			c.recordVerb(KindVerbStart, v.Name())
			c.runVerb(ctx, v)
			c.recordVerb(KindVerbEnd, v.Name())
		default:
			c.log(zerolog.InfoLevel).Str("verb", v.Name()).Msg("unsupported verb in a confirm hook: jambonz declines the call")
			return false
		}
	}
	return !c.ended
}

// bridgeEvents plays what happens while the legs are bridged, up to the call time
// end: amd (dial.amd), DTMF (dtmfHook), a REFER (referHook).
func (c *callRun) bridgeEvents(ctx context.Context, d *verbs.Dial, out DialOutcome, leg *CallInfo, end time.Duration) {
	type event struct {
		at   time.Duration
		fire func()
	}
	var events []event
	now := c.elapsed()
	if d.Amd != nil {
		at := now + 2*time.Second
		events = append(events, event{at, func() {
			for _, evt := range amdEvents(out.AMD, d.Amd) {
				// dial.js _onAmdEvent: performHook with the call's info and the event;
				// verbs returned replace the application.
				c.amdHook(ctx, d.Amd.ActionHook, evt)
			}
		}})
	}
	if d.DtmfHook != nil {
		parent, child := dtmfCollectors(d.DtmfCapture)
		var pbuf, cbuf string
		t := now
		for _, k := range out.DTMF {
			k := k
			t += orDefault(k.After, defaultTurnDelay)
			events = append(events, event{t, func() {
				caller := k.Leg == "caller"
				patterns, buf, info := child, &cbuf, leg.fields()
				if caller {
					patterns, buf, info = parent, &pbuf, c.info.fields()
				}
				c.recordInput("digits", k.Digits)
				for _, key := range k.Digits {
					*buf += string(key)
					if match := matchDTMF(*buf, patterns); match != "" {
						info["dtmf"] = match
						// dial.js _onInfo: a verb:hook, its answer ignored.
						c.unreadHook(ctx, d.DtmfHook, info, "the dial's dtmfHook")
						*buf = ""
					}
				}
			}})
		}
	}
	if r := out.Refer; r != nil {
		events = append(events, event{now + orDefault(r.After, defaultTurnDelay), func() { c.refer(ctx, d, r, leg) }})
	}
	// In time order (each list is; merge by a simple sort).
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && events[j].at < events[j-1].at; j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
	gen := c.generation
	for _, e := range events {
		if e.at > end {
			return
		}
		if !c.spend(ctx, max(e.at-c.elapsed(), 0)) || c.generation != gen {
			return
		}
		e.fire()
		if c.ended || c.cut || c.generation != gen {
			return
		}
	}
}

// amdHook requests the amd actionHook: a verb:hook whose verbs replace the
// application's (Task.performHook).
func (c *callRun) amdHook(ctx context.Context, h *verbs.Hook, evt map[string]any) {
	vs, replace, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, h, c.payload(evt))
	if ok && replace && !c.ended {
		c.replaceQueue(vs)
		c.cut = true
	}
}

// amdEvents are the events amd-utils.js emits for a verdict.
func amdEvents(verdict string, a *verbs.Amd) []map[string]any {
	switch verdict {
	case "machine":
		return []map[string]any{
			{"type": "amd_machine_detected", "reason": "long greeting", "greeting": "Hi, you have reached the voicemail of Jane. Please leave a message after the tone.", "language": "en-US"},
			{"type": "amd_machine_stopped_speaking"},
		}
	case "silence":
		return []map[string]any{{"type": "amd_no_speech_detected"}}
	case "fax", "tone":
		return []map[string]any{{"type": "amd_tone_detected", "frequency": 2100, "variance": 0}}
	case "error":
		return []map[string]any{{"type": "amd_error", "error": "recognizer failed"}}
	}
	return []map[string]any{{"type": "amd_human_detected", "reason": "short greeting", "greeting": "Hello?", "language": "en-US"}}
}

// dtmfCollectors are a dial's DTMF patterns per leg (dial.js parseDtmfOptions). A
// list applies to both legs. In the object form jambonz puts parentCall's patterns
// with childCall's, on the called leg, and none on the caller's: so do we.
func dtmfCollectors(capture any) (parent, child []string) {
	strs := func(v any) []string {
		var out []string
		list, _ := v.([]any)
		for _, e := range list {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	switch x := capture.(type) {
	case []any:
		return strs(x), strs(x)
	case map[string]any:
		return nil, append(strs(x["childCall"]), strs(x["parentCall"])...)
	}
	return nil, nil
}

// matchDTMF is the pattern the keys collected end with (dtmf-collector.js).
func matchDTMF(collected string, patterns []string) string {
	for _, p := range patterns {
		if p != "" && strings.HasSuffix(collected, p) {
			return p
		}
	}
	return ""
}

// refer delivers a REFER during the dial to its referHook (dial.js handleRefer):
// from the callee, the hook's verbs replace the caller's application and the dial
// ends; without a referHook jambonz answers 501 and nothing changes.
func (c *callRun) refer(ctx context.Context, d *verbs.Dial, r *DialRefer, leg *CallInfo) {
	if d.ReferHook == nil {
		c.log(zerolog.InfoLevel).Msg("REFER during a dial without a referHook: jambonz answers 501")
		return
	}
	to := orString(r.To, "sip:+15550100@example.com")
	user := strings.TrimPrefix(strings.TrimPrefix(to, "sip:"), "tel:")
	user, _, _ = strings.Cut(user, "@")
	info := leg.fields()
	referring, referred := leg.CallSid, c.info.CallSid
	if r.Leg == "caller" {
		info = c.info.fields()
		referring, referred = c.info.CallSid, leg.CallSid
	}
	info["refer_details"] = map[string]any{
		"sip_refer_to": "<" + to + ">", "refer_to_user": user,
		"referring_call_sid": referring, "referred_call_sid": referred,
	}
	vs, replace, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, d.ReferHook, info)
	c.checkDeadline()
	if ok && replace && !c.ended {
		if r.Leg == "caller" {
			// The dialed leg gets the verbs (doAdulting): it leaves the call.
			c.log(zerolog.InfoLevel).Int("verbs", len(vs)).Msg("REFER on the caller's leg: the dialed leg takes the referHook's verbs")
			c.cut = true
			return
		}
		c.replaceQueue(vs)
		c.cut = true
	}
}

// conference runs a conference with the far end of Script.Conferences: start, join
// (or wait for a moderator, the waitHook played meanwhile), the talking events,
// leave and end at the statusHook for the events it lists (conference.js).
func (c *callRun) conference(ctx context.Context, v *verbs.Conference) {
	c.answer(ctx)
	var sc ConferenceScript
	if c.confNext < len(c.opts.Script.Conferences) {
		sc = c.opts.Script.Conferences[c.confNext]
	}
	c.confNext++
	sid := fmt.Sprintf("conf:%s:%s", c.info.AccountSid, v.ConferenceName)
	start := c.elapsed()
	members := sc.Members
	if members == 0 {
		members = 1
		if sc.Running {
			members = 2
		}
	}
	event := func(name string, extra map[string]any) {
		if v.StatusHook == nil || !contains(v.StatusEvents, name) {
			return
		}
		p := map[string]any{"event": name, "duration": (c.elapsed() - start).Seconds(),
			"time": c.opts.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "members": members,
			"conference_sid": sid, "friendly_name": v.ConferenceName}
		for k, x := range extra {
			p[k] = x
		}
		// Task._notifyConferenceEvent: a verb:hook (acked), its verbs ignored.
		c.unreadHook(ctx, v.StatusHook, c.payload(p), "the conference's statusHook")
	}
	waits := !sc.Running && v.StartConferenceOnEnter != nil && !*v.StartConferenceOnEnter
	if waits {
		// _doWait: the waitHook's verbs play in a loop until the moderator comes.
		arrives := sc.ModeratorAfter
		gen := c.generation
		for !c.ended && c.generation == gen {
			if v.WaitHook != nil {
				vs, _, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, v.WaitHook, c.info.fields())
				if !ok || len(vs) == 0 {
					v.WaitHook = nil
				}
			}
			step := 30 * time.Second
			if arrives > 0 {
				step = max(arrives-(c.elapsed()-start), 0)
			}
			if v.WaitHook == nil && arrives == 0 {
				c.hold(ctx, func() bool { return false })
				return
			}
			if !c.spend(ctx, step) {
				return
			}
			if arrives > 0 && c.elapsed()-start >= arrives {
				break
			}
		}
		if c.ended || c.generation != gen {
			return
		}
	} else if !sc.Running {
		event("start", nil)
	}
	if v.EnterHook != nil {
		c.sideHook(ctx, v.EnterHook, nil)
	}
	event("join", nil)
	joined := c.elapsed()
	gen := c.generation
	for _, e := range sc.Events {
		if !c.spend(ctx, orDefault(e.After, defaultTurnDelay)) || c.generation != gen {
			break
		}
		event(e.Event, nil)
	}
	if !c.ended && c.generation == gen && !c.cut {
		c.spend(ctx, max(joined+orDefault(sc.Duration, defaultDialDuration)-c.elapsed(), 0))
	}
	if c.ended {
		return
	}
	members--
	event("leave", nil)
	if members == 0 || v.EndConferenceOnExit {
		event("end", nil)
	}
	cut := c.cut
	c.cut = false
	c.actionHook(ctx, v.ActionHook, nil)
	c.cut = cut
}

// enqueue puts the caller in a queue: the waitHook is requested again and again
// (its say, play, pause, tag verbs play in between; leave ends the wait) until a
// partner dequeues the caller (Script.Queues) or the application moves the call;
// then the actionHook with queue_result (enqueue.js). The account's queue event hook
// hears the caller join and leave (queueEvent).
func (c *callRun) enqueue(ctx context.Context, v *verbs.Enqueue) {
	c.answer(ctx)
	var q QueueOutcome
	if c.queueNext < len(c.opts.Script.Queues) {
		q = c.opts.Script.Queues[c.queueNext]
	}
	c.queueNext++
	sid := fmt.Sprintf("queue:%s:%s", c.info.AccountSid, v.QueueName)
	size := max(q.Size, 1)
	// _addToQueue: join, with the queue's length once the caller is in it.
	c.queueEvent(ctx, c.info.fields(), map[string]any{"event": "join", "queue": v.QueueName, "length": size,
		"join_time": c.clock.Now().UnixMilli()})
	start := c.elapsed()
	queueTime := func() int { return int((c.elapsed() - start) / time.Second) }
	result := "hangup" // QueueResults.Wait: what a caller who is never dequeued gets
	gen := c.generation
	waitHook := v.WaitHook
	dequeued := func() bool { return q.DequeueAfter > 0 && c.elapsed()-start >= q.DequeueAfter }
	for !c.ended && c.generation == gen && !dequeued() {
		if waitHook == nil {
			if q.DequeueAfter > 0 {
				c.spend(ctx, max(start+q.DequeueAfter-c.elapsed(), 0))
				continue
			}
			c.hold(ctx, func() bool { return false })
			break
		}
		if !c.spend(ctx, 500*time.Millisecond) { // silence_stream://500 between waitHooks
			break
		}
		// _playHook: only these fields, not the call's (enqueue.js).
		params := map[string]any{"queue_sid": sid, "queue_time": queueTime(), "queue_size": max(q.Size, 1),
			"queue_position": max(q.Position, 1) - 1, "call_sid": c.info.CallSid, "call_id": c.info.CallID}
		if c.info.CustomerData != nil {
			params["customerData"] = c.info.CustomerData
		}
		vs, _, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, waitHook, params)
		c.checkDeadline()
		if !ok || len(vs) == 0 {
			waitHook = nil // jambonz stops asking, the caller stays in the queue
			continue
		}
		leave := false
		for _, w := range vs {
			if c.ended || c.generation != gen || dequeued() {
				break
			}
			switch w := w.(type) {
			case *verbs.Leave:
				leave = true
			case *verbs.Say, *verbs.Play, *verbs.Pause, *verbs.Tag:
				c.recordVerb(KindVerbStart, w.Name())
				c.runVerb(ctx, w)
				c.recordVerb(KindVerbEnd, w.Name())
			default:
				c.log(zerolog.InfoLevel).Str("verb", w.Name()).Msg("unsupported verb in an enqueue waitHook: jambonz stops asking")
				waitHook = nil
			}
			if leave || waitHook == nil {
				break
			}
		}
		if leave {
			result = "leave"
			break
		}
	}
	if dequeued() && result != "leave" && c.generation == gen && !c.ended {
		// notifyQueueEvent dequeue: leave, dequeued, naming the partner's call.
		c.queueEvent(ctx, c.info.fields(), map[string]any{"event": "leave", "queue": v.QueueName, "length": size - 1,
			"leave_reason": "dequeued", "leave_time": c.clock.Now().UnixMilli(), "dequeuer": c.otherCall()})
		result = "bridged"
		c.spend(ctx, orDefault(q.Bridged, defaultDialDuration))
		if c.ended {
			return
		}
	} else {
		// The task killed before anyone dequeued the caller (a leave verb, the call
		// moved on or ended): leave, abandoned.
		c.queueEvent(ctx, c.info.fields(), map[string]any{"event": "leave", "queue": v.QueueName, "length": size - 1,
			"leave_reason": "abandoned", "leave_time": c.clock.Now().UnixMilli()})
		if c.ended {
			return
		}
	}
	cut := c.cut
	c.cut = false
	c.actionHook(ctx, v.ActionHook, map[string]any{"queue_sid": sid, "queue_time": queueTime(), "queue_result": result})
	c.cut = cut
}

// dequeue takes a member from a queue (Script.Dequeues): a member found is bridged
// and dequeue_result is complete when the bridge ends; none times out.
func (c *callRun) dequeue(ctx context.Context, v *verbs.Dequeue) {
	c.answer(ctx)
	var d DequeueOutcome
	if c.dequeueNext < len(c.opts.Script.Dequeues) {
		d = c.opts.Script.Dequeues[c.dequeueNext]
	}
	c.dequeueNext++
	if !d.Member || v.Timeout > 0 && d.After >= seconds(v.Timeout) {
		if v.Timeout <= 0 {
			// No timeout: jambonz polls the queue every 5 s until the call ends.
			c.hold(ctx, func() bool { return false })
			return
		}
		if c.spend(ctx, seconds(v.Timeout)) {
			c.actionHook(ctx, v.ActionHook, map[string]any{"dequeue_result": "timeout"})
		}
		return
	}
	if !c.spend(ctx, time.Second+d.After) {
		return
	}
	// The member's own session tells the account's queue event hook it left, naming
	// this call as the dequeuer (enqueue.js notifyQueueEvent, dequeue.js).
	c.queueEvent(ctx, c.otherCall(), map[string]any{"event": "leave", "queue": v.QueueName, "length": 0,
		"leave_reason": "dequeued", "leave_time": c.clock.Now().UnixMilli(), "dequeuer": callJSON(c.info.fields())})
	if !c.spend(ctx, orDefault(d.Bridged, defaultDialDuration)) {
		return
	}
	c.actionHook(ctx, v.ActionHook, map[string]any{"dequeue_result": "complete"})
}

// queueEvent sends queue:status to the account's queue event hook, when it has one
// (call-session.js performQueueWebhook): the event's fields with the call's, the
// call's winning ({...obj, ...callInfo.toJSON()}), over HTTP whatever the
// application's transport, signed with the account's secret, the hook's answer
// ignored. jambonz does not wait for it; the simulated call does, which costs only
// the request's own time. A failure is alerted (http-requestor.js alerts it too).
func (c *callRun) queueEvent(ctx context.Context, call, event map[string]any) {
	t := c.opts.queueHook
	if t == nil || ctx.Err() != nil {
		return
	}
	call = callJSON(call)
	for k, v := range event {
		if _, taken := call[k]; !taken {
			call[k] = v
		}
	}
	if _, err := (&httpApp{c: c}).request(ctx, *t, "POST", "", "", call, nil); err != nil && ctx.Err() == nil && !interrupted(err) {
		c.alert(hookAlertType(err), t.Clean(), c.failureDetail("queue event hook", t.Clean(), err))
	}
}

// callJSON is a call's fields as jambonz's CallInfo.toJSON has them: without the
// application's env_vars, which only the call hook and session:new carry.
func callJSON(fields map[string]any) map[string]any {
	delete(fields, "env_vars")
	return fields
}

// otherCall is the call info of the simulated call on the other side of a queue: the
// partner who dequeues the caller, or the member a dequeue takes. An answered inbound
// call of the same account.
func (c *callRun) otherCall() map[string]any {
	other := CallInfo{
		CallSid: newUUID(), Direction: "inbound", From: "+15550100000", To: c.info.To, CallID: newUUID(), SbcCallID: newUUID(),
		CallerID: "+15550100000", CallStatus: StatusInProgress, SipStatus: 200, SipReason: "OK",
		AccountSid: c.info.AccountSid, ApplicationSid: c.info.ApplicationSid, TraceID: randomHex(16), FsSipAddress: c.info.FsSipAddress,
	}
	return other.fields()
}

// bot runs dialogflow, lex or rasa with Script.Bots: each exchange goes to the
// eventHook (the caller's words, the bot's reply), the reply is spoken, and the
// actionHook reports the end.
func (c *callRun) bot(ctx context.Context, name string, action, eventHook *verbs.Hook) {
	c.answer(ctx)
	var b BotScript
	if c.botNext < len(c.opts.Script.Bots) {
		b = c.opts.Script.Bots[c.botNext]
	}
	c.botNext++
	gen := c.generation
	for i, in := range b.Intents {
		last := i == len(b.Intents)-1
		if !c.spend(ctx, orDefault(in.After, defaultTurnDelay)) || c.generation != gen {
			return
		}
		if in.Say != "" {
			c.recordInput("speech", in.Say)
		}
		var events []map[string]any
		switch name {
		case "rasa":
			events = append(events, map[string]any{"event": "userMessage", "message": in.Say})
			if in.Reply != "" {
				events = append(events, map[string]any{"event": "botMessage", "message": []any{map[string]any{"recipient_id": c.info.CallSid, "text": in.Reply}}})
			}
		case "lex":
			events = append(events, map[string]any{"event": "intent", "data": map[string]any{"name": in.Intent, "confirmationState": "None", "state": "InProgress"}},
				map[string]any{"event": "transcription", "data": map[string]any{"transcript": in.Say}})
			if in.Reply != "" {
				// lex.js _onTextResponse reads the event's messages[0].msg and type.
				events = append(events, map[string]any{"event": "response-text", "data": map[string]any{
					"messages": []any{map[string]any{"type": "PlainText", "msg": in.Reply}}}})
			}
		default:
			// dialogflow/index.js: the final transcription, then the intent, each the
			// module's Dialogflow ES response as it is (transcription.js reads
			// recognition_result; intent.js query_result, its intent's display_name
			// and end_interaction, fulfillment_text). The scenario's last intent ends
			// the interaction: the task then reports completed.
			events = append(events,
				map[string]any{"event": "transcription", "data": map[string]any{"response_id": "", "recognition_result": map[string]any{
					"message_type": "TRANSCRIPT", "transcript": in.Say, "is_final": true, "confidence": 0.92, "language_code": "en-US"}}},
				map[string]any{"event": "intent", "data": dialogflowIntent(in, last)})
		}
		for _, e := range events {
			if eventHook == nil {
				break
			}
			gen := c.generation
			vs, replace, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, eventHook, c.payload(e))
			if ok && replace && !c.ended {
				c.replaceQueue(vs)
			}
			if c.generation != gen {
				// The event hook redirected: the bot ends ("redirect"), its answer ignored.
				c.hookVerbs(ctx, wssession.MsgVerbHook, action, c.payload(map[string]any{name + "_result": "redirect"}))
				return
			}
		}
		if in.Reply != "" {
			c.recordSpoken("bot", in.Reply)
		}
	}
	if c.ended {
		return
	}
	result := "completed"
	if name != "dialogflow" {
		// lex and rasa end when the caller stops talking to them: rasa's nested
		// gather times out; lex has no end of its own but the caller's hangup.
		result = map[string]string{"rasa": "timeout", "lex": "caller hungup"}[name]
	}
	c.actionHook(ctx, action, map[string]any{name + "_result": result})
}

// dialogflowIntent is a Dialogflow ES StreamingDetectIntentResponse for the intent
// in, as the module hands it to jambonz (snake_case fields).
func dialogflowIntent(in BotIntent, endInteraction bool) map[string]any {
	var messages []any
	if in.Reply != "" {
		messages = []any{map[string]any{"text": map[string]any{"text": []any{in.Reply}}}}
	}
	return map[string]any{
		"response_id": newUUID(),
		"query_result": map[string]any{
			"query_text": in.Say, "language_code": "en-US", "speech_recognition_confidence": 0.92,
			"action": "", "parameters": map[string]any{}, "all_required_params_present": true,
			"fulfillment_text": in.Reply, "fulfillment_messages": messages, "output_contexts": []any{},
			"intent": map[string]any{"name": "projects/simulated/agent/intents/" + newUUID(), "display_name": in.Intent,
				"end_interaction": endInteraction},
			"intent_detection_confidence": 0.9,
		},
	}
}

// restDial runs a rest:dial verb found among an application's verbs as jambonz's
// task runs it there (lib/tasks/rest_dial.js): the task only drives a call the REST
// API created (create-call.js sends its INVITE and emits its connect and callStatus
// events), so as a verb it places no call and requests no call_hook; its exec starts
// the ring timer and waits for a task-done that only those events, or a kill, give.
// At the timeout it tries to cancel the call's INVITE, which a call already set up
// cannot be. The verb lasts until the call ends or a command replaces the verbs; a
// compat warning says so.
func (c *callRun) restDial(ctx context.Context, _ *verbs.RestDial) {
	c.compat(CompatRestDialVerb, "rest:dial among the application's verbs: jambonz's task only drives a call the REST API creates; as a verb it places no call, requests no call_hook, and waits until the call ends or its verbs are replaced (create the call with the REST API, or send a dial command, instead)")
	c.hold(ctx, func() bool { return false })
}
