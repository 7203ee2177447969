package callctl

import (
	"context"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// runVerb executes one verb with simulated media.
func (c *callRun) runVerb(ctx context.Context, v verbs.Verb) {
	switch v := v.(type) {
	case *verbs.Say:
		if v.Stream || c.ai.autoStream {
			c.streamingSay(ctx, v)
			return
		}
		c.answer(ctx)
		if c.spend(ctx, sayDuration(v)) {
			c.recordSpoken("say", strings.Join(v.Text, " "))
		}
	case *verbs.Play:
		c.answer(ctx)
		d := playDuration(v)
		if c.spend(ctx, d) {
			c.actionHook(ctx, v.ActionHook, map[string]any{
				"reason": "playCompleted", "playback_seconds": int(d / time.Second),
				"playback_milliseconds": d.Milliseconds(),
			})
		}
	case *verbs.Pause:
		c.spend(ctx, seconds(v.Length))
	case *verbs.Gather:
		c.gather(ctx, v)
	case *verbs.Dial:
		c.dial(ctx, v)
	case *verbs.Redirect:
		if c.movesToAnotherApp(v.ActionHook) {
			// An absolute URL on another host (or transport) is another application,
			// as in jambonz: the call moves there and later relative hooks follow.
			c.redirect(ctx, v.ActionHook.URL)
			return
		}
		// Over a WebSocket the hook goes as session:redirect, as jambonz sends it
		// (docs/call-control.md §4); over HTTP the type is not sent.
		c.actionHookAs(ctx, wssession.MsgSessionRedirect, v.ActionHook, nil)
	case *verbs.Hangup:
		c.hangup(ReasonAppHangup)
	case *verbs.Answer:
		c.answer(ctx)
	case *verbs.Alert:
		if !c.answered {
			c.info.SipStatus, c.info.SipReason = 180, "Ringing"
			c.record(Event{Kind: KindCallStatus, Status: string(StatusRinging)})
		}
	case *verbs.SipDecline:
		c.decline(v)
	case *verbs.Tag:
		// jambonz replaces customerData with the tag's data; later hooks carry it.
		c.info.CustomerData = v.Data
	case *verbs.Config:
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
			per = time.Duration(v.Duration) * time.Millisecond
		}
		c.spend(ctx, time.Duration(len(v.Dtmf))*per)
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
		c.answer(ctx)
		d := defaultDialDuration
		if v.MaxLength > 0 {
			d = seconds(v.MaxLength)
		}
		if c.spend(ctx, d) {
			c.actionHook(ctx, v.ActionHook, nil)
		}
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

// actionHook requests a verb's action hook; verbs it returns replace the remaining
// ones. A failed hook was alerted by the app: the call goes on with what it has.
func (c *callRun) actionHook(ctx context.Context, h *verbs.Hook, extra map[string]any) (ok bool) {
	return c.actionHookAs(ctx, wssession.MsgVerbHook, h, extra)
}

// actionHookAs is actionHook with the WebSocket message type to send it as.
func (c *callRun) actionHookAs(ctx context.Context, typ string, h *verbs.Hook, extra map[string]any) (ok bool) {
	if h == nil || c.ended || c.cut {
		return true
	}
	vs, replace, ok := c.app.hook(ctx, typ, h, c.payload(extra))
	if ok && replace {
		c.replaceQueue(vs)
	}
	c.checkDeadline()
	return ok
}

// sideHook requests a hook whose verbs do not change the call's course (wait,
// enter, partial result, status hooks): their verbs would play to the waiting
// caller, which has no effect without audio.
func (c *callRun) sideHook(ctx context.Context, h *verbs.Hook, extra map[string]any) bool {
	return c.sideHookAs(ctx, wssession.MsgVerbHook, h, extra)
}

func (c *callRun) sideHookAs(ctx context.Context, typ string, h *verbs.Hook, extra map[string]any) bool {
	if h == nil || c.ended || c.cut {
		return true
	}
	_, _, ok := c.app.hook(ctx, typ, h, c.payload(extra))
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
	var result map[string]any
	switch {
	case in.Digits != "" && wantsDigits:
		result = map[string]any{"reason": "dtmfDetected", "digits": in.Digits}
	case in.Speech != "" && wantsSpeech:
		result = map[string]any{"reason": "speechDetected", "speech": map[string]any{
			"language_code": "en-US", "is_final": true,
			"alternatives": []any{map[string]any{"transcript": in.Speech, "confidence": 0.92}},
		}}
	}
	if result == nil {
		wait := defaultGatherWait
		if g.Timeout > 0 {
			wait = seconds(g.Timeout)
		}
		if !c.spend(ctx, prompt+wait) {
			return
		}
		c.actionHook(ctx, g.ActionHook, map[string]any{"reason": "timeout"})
		return
	}
	after := in.After
	if after == 0 {
		after = defaultInputDelay
	}
	if !c.spend(ctx, prompt+after) {
		return
	}
	if result["reason"] == "speechDetected" {
		c.recordInput("speech", in.Speech)
	} else {
		c.recordInput("digits", in.Digits)
	}
	if result["reason"] == "speechDetected" && g.PartialResultHook != nil {
		partial := strings.Fields(in.Speech)
		if len(partial) > 1 {
			c.sideHook(ctx, g.PartialResultHook, map[string]any{"speech": map[string]any{
				"language_code": "en-US", "is_final": false,
				"alternatives": []any{map[string]any{"transcript": partial[0], "confidence": 0.5}},
			}})
		}
	}
	c.actionHook(ctx, g.ActionHook, result)
}

func (c *callRun) decline(v *verbs.SipDecline) {
	if c.answered {
		// An answered call cannot be rejected any more: jambonz ignores the verb.
		c.log(zerolog.WarnLevel).Int("status", v.Status).Msg("sip:decline on an answered call ignored")
		return
	}
	c.end(statusOfSIP(v.Status), ReasonDeclined, v.Status)
	if v.Reason != "" {
		c.info.SipReason = v.Reason // the application's own phrase
	}
}

// statusOfSIP maps the SIP status of a rejected call to the call status.
func statusOfSIP(sip int) Status {
	switch sip {
	case 486, 600:
		return StatusBusy
	case 408, 480, 487:
		return StatusNoAnswer
	}
	return StatusFailed
}

func sayDuration(s *verbs.Say) time.Duration {
	chars := 0
	for _, t := range s.Text {
		chars += len(t)
	}
	d := max(time.Duration(chars)*speechPerCharacter, minimumSayDuration)
	return loops(d, s.Loop)
}

func playDuration(p *verbs.Play) time.Duration {
	per := defaultPlayDuration
	if p.TimeoutSecs > 0 {
		per = seconds(p.TimeoutSecs)
	}
	return loops(time.Duration(max(len(p.URL), 1))*per, p.Loop)
}

// loops multiplies one pass by the loop count; "forever" lasts until the call ends.
func loops(d time.Duration, n int) time.Duration {
	switch {
	case n == verbs.LoopForever:
		return defaultMaxDuration * 2
	case n > 1:
		return d * time.Duration(n)
	}
	return d
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
