package callctl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
)

// A dialed leg that a child_call_hook made a session of its own: jambonz's
// AdultingCallSession (place-outdial.js doAdulting, lib/session/adulting-call-session.js).
// The leg runs on its own goroutine, with its own application connection, clock and
// timeline, beside the call that dialed it; the call waits for it before its Result
// is complete, and its events, requests and alerts join the call's (joinLegs).

// adultLeg is a leg running as its own session.
type adultLeg struct {
	run  *callRun
	done chan struct{}
	// at is the call's time when the leg adulted: the leg's timeline starts there.
	at time.Duration
}

// adult starts the session of leg (answered, up for upBefore already) running vs,
// the child_call_hook's verbs, the callee answering its gathers from inputs and
// hanging up after left. The application is the call's own, as jambonz clones the
// call's application with a new requestor: a WebSocket application gets a new
// connection to its call hook's URL with /adulting appended, whose first message is
// session:adulting; an HTTP application gets session:adulting POSTed to /adulting,
// and its status hook the leg's statuses.
func (c *callRun) adult(ctx context.Context, leg CallInfo, vs []verbs.Verb, inputs []GatherInput, left, upBefore time.Duration) {
	o := *c.opts
	o.Control, o.OnEvent = nil, nil
	// The callee hangs up when the leg's time is over (a HangupAfter of zero would
	// mean never).
	o.Script = Script{Gathers: inputs, HangupAfter: max(left, time.Millisecond)}
	o.app = adultTarget(c.callApp)
	child := newCall(&o)
	child.adulting, child.callApp, child.upBefore = true, c.callApp, upBefore
	child.info = leg
	child.result.CallSid = leg.CallSid
	child.answered, child.result.Answered = true, true
	l := &adultLeg{run: child, done: make(chan struct{}), at: c.elapsed()}
	c.legs = append(c.legs, l)
	parent := callJSON(c.info.fields())
	legCtx, stop := legContext(ctx)
	go func() {
		defer close(l.done)
		defer stop()
		child.runAdult(legCtx, parent, vs)
	}()
}

// legContext is the context of an adulted leg's session: once adulted the leg is a
// call of its own (place-outdial.js doAdulting makes an AdultingCallSession, which
// the parent's session no longer holds), so the call being hung up through the API
// (ErrAPIHangup) does not end it; any other end of the call's context (a node
// shutting down, a run's time limit) does, with its cause.
func legContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	stopWatching := context.AfterFunc(parent, func() {
		if cause := context.Cause(parent); !errors.Is(cause, ErrAPIHangup) {
			cancel(cause)
		}
	})
	return ctx, func() {
		stopWatching()
		cancel(nil)
	}
}

// adultTarget is where a leg's session goes: for a WebSocket application,
// doAdulting's `app.call_hook.url += '/adulting'`, which lands in the fragment of a
// URL that has one (the socket then opens on the call hook's own path, with its
// policy); an HTTP application is requested at its call hook's URL.
func adultTarget(app fragment.Target) fragment.Target {
	if app.Policy.Transport != fragment.WebSocket || strings.Contains(app.Raw, "#") {
		return app
	}
	t, err := fragment.Parse(app.Clean() + "/adulting")
	if err != nil {
		return app // cannot happen: a valid URL with a path appended
	}
	return t
}

// runAdult runs the leg's session: session:adulting, then vs, until the verbs run out
// (an HTTP application's leg is hung up; a WebSocket one waits for commands), the
// callee hangs up or the call's context ends.
func (c *callRun) runAdult(ctx context.Context, parent map[string]any, vs []verbs.Verb) {
	c.ctx = ctx
	c.recordStart()
	data := callJSON(c.info.fields())
	data["parent_call_info"] = parent
	if c.opts.app.Policy.Transport == fragment.WebSocket {
		a := newWSApp(c)
		c.app = a
		a.adulting(ctx, data)
	} else {
		a := newHTTPApp(c)
		c.app = a
		a.adulting(ctx, data)
	}
	if !c.ended {
		c.queue = vs
		c.execute(ctx)
	}
	c.app.finish(ctx)
	c.result.Duration = c.elapsed()
	c.recordEnd()
	c.result.Timeline = c.timeline.all(c.result.CallSid)
	c.timeline = timeline{}
	c.decodePayloads()
}

// adulting opens the leg's connection and sends session:adulting, its first message
// (no session:new). The requestor never learnt a call_sid, so no envelope on this
// connection carries one (ws-requestor.js sets it from session:new). The message is
// acked, but doAdulting ignores the answer: verbs in the ack do not run, a compat
// warning. A connection that cannot be opened hangs the leg up.
func (a *wsApp) adulting(ctx context.Context, data map[string]any) {
	c := a.c
	if err := a.s.Dial(ctx); err != nil {
		if ctx.Err() != nil {
			c.endCanceled()
			return
		}
		c.alert(AlertWebhookConnectionFailure, c.opts.app.Clean(), c.failureDetail("connect", c.opts.app.Clean(), err))
		c.hangup(ReasonConnectFailed)
		return
	}
	raw, _ := json.Marshal(wirePayload(data)) // call fields: always encodable
	ack, err := a.s.Adult(ctx, raw)
	switch {
	case err != nil:
		// doAdulting logs the failure; the leg's verbs run all the same.
		c.log(zerolog.InfoLevel).Err(err).Msg("session:adulting was not acked")
	case len(ack) > 0 && string(ack) != "[]" && string(ack) != "null":
		c.compat(CompatAdultingAckVerbs, "the session:adulting ack carries verbs: jambonz ignores them, the leg runs the verbs its child_call_hook returned")
	}
}

// adulting POSTs session:adulting to /adulting on the call hook's host (an HTTP
// requestor's relative URL); the answer is ignored, a failure alerted.
func (a *httpApp) adulting(ctx context.Context, data map[string]any) {
	c := a.c
	t, err := fragment.Resolve(c.opts.app, "/adulting")
	if err != nil {
		return // cannot happen: a path against a valid application URL
	}
	if _, err := a.request(ctx, t, "POST", c.opts.Username, c.opts.Password, data, nil); err != nil && ctx.Err() == nil && !interrupted(err) {
		c.alert(hookAlertType(err), t.Clean(), c.failureDetail("session:adulting", t.Clean(), err))
	}
}

// joinLegs waits for the legs' sessions to end and adds what they did to the call's
// Result: their timelines after the call's own (each line with the leg's call_sid and
// the call's time), their requests, commands, alerts and compat warnings.
func (c *callRun) joinLegs() {
	for _, l := range c.legs {
		<-l.done
		r := &l.run.result
		base := c.timeline.len()
		for _, e := range r.Timeline {
			e.At += l.at
			c.timeline.add(e, c.result.CallSid)
			if c.opts.OnEvent != nil {
				c.opts.OnEvent(e)
			}
		}
		for _, q := range r.Requests {
			q.Event += base
			q.HookIndex = -1 // Result.Hooks lists the call's own
			c.result.addRequest(q)
		}
		for _, cmd := range r.Commands {
			if len(c.result.Commands) < maxRecordedRequests {
				cmd.Event += base
				c.result.Commands = append(c.result.Commands, cmd)
			}
		}
		c.result.Alerts = append(c.result.Alerts, r.Alerts...)
		c.result.Compat = append(c.result.Compat, r.Compat...)
	}
	c.legs = nil
}
