package callctl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// What listens to the caller in the background and what the application streams to
// be spoken: config bargeIn (a background gather), transcribe, the TTS stream of
// tts:tokens. Each follows jambonz-feature-server 0.9.8: lib/tasks/config.js,
// lib/utils/background-task-manager.js, lib/tasks/gather.js, lib/tasks/transcribe.js,
// lib/tasks/say.js, lib/utils/tts-streaming-buffer.js, lib/session/call-session.js.

// The TTS stream buffer's marks (tts-streaming-buffer.js).
const (
	ttsHighWater = 1000 // buffered characters past which tokens are refused ("full")
	ttsLowWater  = 200  // a full buffer that drains to this resumes
)

// voiceAI is the call's state of background listening and TTS streaming.
type voiceAI struct {
	// bargeIn is the running background gather of config bargeIn; nil when off.
	bargeIn *verbs.BargeIn
	// transcribing is the transcription hook of a running transcribe (the verb, or
	// config transcribe); nil when nothing transcribes.
	transcribing *verbs.Hook
	// transcribeRecognizer is the running transcription's recognizer.
	transcribeRecognizer map[string]any
	// ttsBackground: config ttsStream enabled a background streaming say.
	ttsBackground bool
	// streamingSay: the current verb is a say with stream: true, or any say once
	// config autoStreamTts is on.
	streamingSay bool
	// autoStream: config autoStreamTts, every say streams (say.js exec).
	autoStream bool
	// connected: the TTS stream is open (stream_open sent) and stays so until it
	// is stopped (stream_closed): a later streaming say speaks on it without
	// opening it again (tts-streaming-buffer.js start asserts NotConnected, and
	// its rejection goes unhandled; Connected fires once).
	connected bool
	// flushed: the stream emptied after a tts:flush (a streaming say then ends).
	flushed bool

	buffered    []string // tokens not spoken yet (the stream was not open)
	bufferedLen int
	full        bool
	spoken      strings.Builder // tokens spoken since the last flush

	// The caller's turns (Script.Speech): next to say, and when it may.
	next     int
	readyAt  time.Duration // the call time the next utterance's After counts from
	ready    bool          // readyAt is set: it is the caller's turn
	awaiting awaitReply    // what ends the agent's reply to the last utterance
}

// awaitReply is what the caller waits for before the next utterance.
type awaitReply int

const (
	awaitNothing awaitReply = iota
	awaitFlush              // the agent streams its reply: its tts:flush
	awaitToken              // the caller interrupts: the reply's first tts:tokens
)

// ttsEnabled is jambonz's isTtsStreamEnabled: a background stream, or a streaming
// say running.
func (v *voiceAI) ttsEnabled() bool { return v.ttsBackground || v.streamingSay }

// listening reports whether anything hears the caller's utterances.
func (v *voiceAI) listening() bool { return v.bargeIn != nil || v.transcribing != nil }

// startListening notes that a background listener started: the caller's first turn
// counts from here.
func (c *callRun) startListening() {
	v := &c.ai
	if v.next == 0 && !v.ready && v.awaiting == awaitNothing {
		v.readyAt, v.ready = c.elapsed(), true
	}
}

// dueUtterance returns the next utterance and the call time it is said, when a
// listener would hear it.
func (c *callRun) dueUtterance() (Utterance, time.Duration, bool) {
	v := &c.ai
	if v.next >= len(c.opts.Script.Speech) || !v.ready || !v.listening() {
		return Utterance{}, 0, false
	}
	u := c.opts.Script.Speech[v.next]
	return u, v.readyAt + orDefault(u.After, defaultTurnDelay), true
}

// hearDue delivers the utterances due by the call time until, in order, passing the
// time up to each. It returns false when the call ended or the current verb was cut
// short (a hook's verbs replaced it).
func (c *callRun) hearDue(ctx context.Context, until time.Duration) bool {
	for !c.ended && !c.cut {
		u, at, ok := c.dueUtterance()
		if !ok || at > until {
			return true
		}
		if wait := at - c.elapsed(); wait > 0 {
			if c.await(ctx, wait, true) != nil {
				return false
			}
		}
		if c.ended || c.cut {
			return false
		}
		gen := c.generation
		c.hear(ctx, u)
		if c.generation != gen {
			c.cut = true // the hook's verbs replace the application: the verb is killed
			return false
		}
	}
	return false
}

// hear delivers one utterance to what listens: the background gather of config
// bargeIn (its actionHook, after a user_interruption when the application streams
// TTS), and a transcription.
func (c *callRun) hear(ctx context.Context, u Utterance) {
	v := &c.ai
	v.next++
	v.ready = false
	input := "speech"
	if u.Digits != "" {
		input = "digits"
	}
	if u.Digits != "" {
		c.recordInput("digits", u.Digits)
	} else {
		c.recordInput("speech", u.Speech)
	}
	answered := false
	replied := false
	if b := v.bargeIn; b != nil && containsOr(b.Input, input, "speech") {
		if v.ttsEnabled() {
			// gather.js _killAudio: a background gather that hears the caller clears
			// the TTS stream (call-session.js clearTtsStream).
			c.ttsInterrupted(ctx)
		}
		if !b.Sticky {
			v.bargeIn = nil
		}
		var result map[string]any
		if u.Digits != "" {
			result = map[string]any{"digits": u.Digits, "reason": "dtmfDetected"}
		} else {
			result = map[string]any{"speech": speechEvent(c.recognizerFor(nil), u.Speech, true, 0.92), "reason": "speechDetected"}
		}
		gen := c.generation
		answered = c.actionHook(ctx, b.ActionHook, result)
		replied = c.generation != gen
		if c.isWS() && !replied {
			// background-task-manager.js bargeIn-done: a WebSocket application's
			// current verb is killed, whatever the hook answers.
			c.cut = true
		}
	}
	if h := v.transcribing; h != nil && u.Speech != "" && !c.ended {
		payload := transcriptionPayload(c.info.fields(), speechEvent(c.recognizerFor(v.transcribeRecognizer), u.Speech, true, 0.92))
		gen := c.generation
		vs, replace, ok := c.hookVerbs(ctx, wssession.MsgVerbHook, h, payload)
		if ok && replace && !c.ended {
			c.replaceQueue(vs)
		}
		answered = answered || ok
		replied = replied || c.generation != gen
		c.checkDeadline()
	}
	c.afterTurn(replied, answered)
}

// afterTurn sets when the caller may speak again: now, once the hook was answered;
// when the application streams its reply, at its tts:flush (or its first tokens for a
// caller who interrupts).
func (c *callRun) afterTurn(replied, answered bool) {
	v := &c.ai
	interrupt := v.next < len(c.opts.Script.Speech) && c.opts.Script.Speech[v.next].Interrupt
	switch {
	case v.ttsEnabled() && !replied && interrupt:
		v.awaiting = awaitToken
	case v.ttsEnabled() && !replied:
		v.awaiting = awaitFlush
	default:
		v.awaiting = awaitNothing
		v.readyAt, v.ready = c.elapsed(), true
	}
	_ = answered
}

// containsOr reports whether list holds s, an empty list counting as holding def.
func containsOr(list []string, s, def string) bool {
	if len(list) == 0 {
		return s == def
	}
	return contains(list, s)
}

// transcriptionPayload is a transcriptionHook's payload. jambonz spreads its CallInfo
// object rather than its JSON (transcribe.js _resolve: {...this.cs.callInfo, speech}),
// so the hook gets the object's own fields: customerData as the _customerData it is
// stored in, which the requestor's to-snake-case spells "customerdata" (and whose
// keys it snake_cases: only a key named customerData is kept verbatim), and
// has_recording; we send it as jambonz does (wirePayload spells the keys).
func transcriptionPayload(fields map[string]any, speech map[string]any) map[string]any {
	if cd, ok := fields["customerData"]; ok {
		delete(fields, "customerData")
		fields["_customerData"] = cd
	}
	fields["has_recording"] = false
	fields["speech"] = speech
	return fields
}

// hold keeps a verb that lasts until something else happens (transcribe, a streaming
// say, an llm conversation that holds, an enqueue nobody dequeues): the utterances
// due are heard meanwhile; it ends when done reports true, the call ends, the verb
// is cut short or a hook's or command's verbs replace the remaining ones. A
// WebSocket application is waited for (for real, up to the idle limit: it may act
// on its own time); otherwise the call's time runs to its deadline.
func (c *callRun) hold(ctx context.Context, done func() bool) {
	gen := c.generation
	for !c.ended && !c.cut && c.generation == gen && !done() {
		if _, at, ok := c.dueUtterance(); ok {
			if !c.hearDue(ctx, at) {
				return
			}
			continue
		}
		ws, isWS := c.app.(*wsApp)
		if isWS && !ws.s.Ended() && ws.s.State() != wssession.Idle {
			limit, reason := c.deadline()
			wait := min(c.opts.IdleLimit, max(limit-c.elapsed(), 0))
			if wait <= 0 {
				c.hangup(reason)
				return
			}
			deadline := time.Now().Add(wait)
			wctx, stop := c.controls.waitContext(ctx, c.opts.Control)
			err := ws.s.Wait(wctx, deadline)
			stop()
			if c.controls.pending() {
				c.urgentControls()
				if c.controls.pending() {
					c.cut = true // a redirect: execute applies it
					return
				}
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, context.DeadlineExceeded) {
				// Nothing came within the idle limit: the caller gives up.
				c.log(zerolog.InfoLevel).Msg("nothing happened within the idle limit while a verb held the call")
				c.hangup(ReasonIdle)
				return
			}
			if errors.Is(err, wssession.ErrSessionClosed) && ws.s.Ended() {
				return
			}
			continue
		}
		limit, reason := c.deadline()
		if c.await(ctx, max(limit-c.elapsed(), 0), true) == nil && !c.ended {
			c.hangup(reason)
		}
		return
	}
}

// isWS reports whether the application is a WebSocket one.
func (c *callRun) isWS() bool {
	_, ok := c.app.(*wsApp)
	return ok
}

// replaceQueue makes vs the remaining verbs, as a hook's or command's verbs do.
func (c *callRun) replaceQueue(vs []verbs.Verb) {
	c.queue = vs
	c.generation++
}

// configure applies a config verb's background tasks: bargeIn, ttsStream,
// transcribe (config.js exec).
func (c *callRun) configure(ctx context.Context, v *verbs.Config) {
	if b := v.BargeIn; b != nil {
		if b.Enable {
			c.ai.bargeIn = b
			c.startListening()
		} else {
			c.ai.bargeIn = nil
		}
	}
	if t := v.TtsStream; t != nil {
		switch {
		case t.Enable && !c.ai.ttsBackground && c.isWS():
			// enableBackgroundTtsStream: only for a WebSocket application.
			c.ai.ttsBackground = true
			c.ttsOpened(ctx)
		case !t.Enable && c.ai.ttsBackground:
			c.ttsClosed(ctx)
			c.ai.ttsBackground = false
		}
	}
	if v.AutoStreamTts != nil {
		// config.js: cs.autoStreamTts; say.js streams every later say.
		c.ai.autoStream = *v.AutoStreamTts
	}
	if t := v.Transcribe; t != nil {
		if t.Enable && t.TranscriptionHook != nil {
			c.ai.transcribing, c.ai.transcribeRecognizer = t.TranscriptionHook, t.Recognizer
			c.startListening()
		} else if !t.Enable {
			c.ai.transcribing = nil
		}
	}
}

// transcribe runs the transcribe verb: it transcribes the caller until the call ends
// or the application moves on (transcribe.js awaits its end).
func (c *callRun) transcribe(ctx context.Context, v *verbs.Transcribe) {
	c.answerUnless(ctx, v.EarlyMedia)
	prev, prevRecognizer := c.ai.transcribing, c.ai.transcribeRecognizer
	c.ai.transcribing, c.ai.transcribeRecognizer = v.TranscriptionHook, v.Recognizer
	if v.TranscriptionHook != nil {
		c.startListening()
	}
	c.hold(ctx, func() bool { return false })
	c.ai.transcribing, c.ai.transcribeRecognizer = prev, prevRecognizer
}

// streamingSay runs a say with stream: true, or any say once config autoStreamTts is
// on: it speaks the application's tts:tokens and ends when the stream empties after a
// tts:flush (say.js handlingStreaming, notifyTtsStreamIsEmpty; jambonz reads
// closeOnStreamEmpty, which its spec does not define, so a stream always closes when
// it empties). A say's own text goes through the stream and is flushed, taking the
// time a say of it takes, during which the caller may talk over it.
func (c *callRun) streamingSay(ctx context.Context, v *verbs.Say) {
	if v.Stream && !c.isWS() {
		// say.js checks stream: true before it adds autoStreamTts: only the verb's
		// own flag needs a WebSocket application.
		c.log(zerolog.WarnLevel).Msg("a streaming say needs a WebSocket application (jambonz fails the verb)")
		return
	}
	c.answer(ctx)
	c.ai.streamingSay, c.ai.flushed = true, false
	defer func() { c.ai.streamingSay = false }()
	c.ttsOpened(ctx)
	if len(v.Text) > 0 {
		for _, t := range v.Text {
			c.ttsBuffer(t)
		}
		c.ttsFeed(ctx)
		if !c.spend(ctx, sayDuration(v)) {
			if !c.ended && c.ai.connected {
				c.ttsClosed(ctx) // killed while it spoke: say.js kill stops the stream
			}
			return
		}
		c.ttsFlush(ctx)
	}
	c.hold(ctx, func() bool { return c.ai.flushed })
	if !c.ai.flushed && !c.ended {
		// Killed before the stream emptied: say.js kill stops the stream.
		c.ttsClosed(ctx)
	}
}

// ttsOpened: the TTS stream connected (once, until it is stopped); what was
// buffered is spoken now.
func (c *callRun) ttsOpened(ctx context.Context) {
	if !c.ai.connected {
		c.ai.connected = true
		c.ttsStreamEvent(ctx, "stream_open")
	}
	c.ttsFeed(ctx)
}

// ttsClosed: the stream was stopped (call-session.js stopTtsStream): stream_closed,
// and the next streaming say opens it again.
func (c *callRun) ttsClosed(ctx context.Context) {
	c.ai.connected = false
	c.ttsStreamEvent(ctx, "stream_closed")
}

// ttsStreamEvent sends tts:streaming-event {event_type}. jambonz requests it at
// /streaming-event, which an HTTP application gets as a POST there (a say streamed by
// autoStreamTts); a WebSocket message of this type carries no hook.
func (c *callRun) ttsStreamEvent(ctx context.Context, typ string) {
	var h *verbs.Hook
	if !c.isWS() {
		h = &verbs.Hook{URL: "/streaming-event"}
	}
	c.app.message(ctx, wssession.MsgTtsStreamingEvent, h, map[string]any{"event_type": typ})
}

// ttsBuffer adds tokens to the buffer.
func (c *callRun) ttsBuffer(tokens string) {
	c.ai.buffered = append(c.ai.buffered, tokens)
	c.ai.bufferedLen += len(tokens)
}

// ttsFeed speaks what is buffered when the stream is open, and resumes a full
// buffer once it drained.
func (c *callRun) ttsFeed(ctx context.Context) {
	v := &c.ai
	if !v.ttsEnabled() {
		return
	}
	for _, t := range v.buffered {
		v.spoken.WriteString(t)
	}
	v.buffered, v.bufferedLen = nil, 0
	if v.full && v.bufferedLen <= ttsLowWater {
		v.full = false
		c.ttsStreamEvent(ctx, "stream_resumed")
	}
}

// ttsFlush ends the agent's streamed turn: what it spoke is recorded; a streaming say
// ends once the stream is empty.
func (c *callRun) ttsFlush(ctx context.Context) {
	v := &c.ai
	if !v.ttsEnabled() {
		c.log(zerolog.DebugLevel).Msg("tts:flush with no TTS stream open: dropped")
		return
	}
	c.ttsFeed(ctx)
	if text := strings.TrimSpace(v.spoken.String()); text != "" {
		c.recordSpoken("tokens", text)
	}
	v.spoken.Reset()
	v.flushed = true
	if v.awaiting == awaitFlush {
		v.awaiting = awaitNothing
		v.readyAt, v.ready = c.elapsed(), true
	}
}

// ttsInterrupted: the caller talked over the stream: user_interruption, and what was
// buffered or being spoken is dropped.
func (c *callRun) ttsInterrupted(ctx context.Context) {
	v := &c.ai
	c.ttsStreamEvent(ctx, "user_interruption")
	if text := strings.TrimSpace(v.spoken.String()); text != "" {
		c.recordSpoken("tokens", text+" [interrupted]")
	}
	v.spoken.Reset()
	v.buffered, v.bufferedLen, v.full = nil, 0, false
}

// ttsTokens handles a tts:tokens command and answers it with tts:tokens-result
// (call-session.js _lccTtsTokens, tts-streaming-buffer.js bufferTokens).
func (c *callRun) ttsTokens(ctx context.Context, data json.RawMessage) {
	var cmd struct {
		ID     json.RawMessage `json:"id"`
		Tokens *string         `json:"tokens"`
	}
	_ = json.Unmarshal(data, &cmd)
	if len(cmd.ID) == 0 || string(cmd.ID) == "null" {
		c.log(zerolog.InfoLevel).Msg("tts:tokens without an id: ignored, as jambonz ignores it")
		return
	}
	var id any
	_ = json.Unmarshal(cmd.ID, &id)
	result := func(fields map[string]any) {
		fields["id"] = id
		c.app.message(ctx, wssession.MsgTtsTokensResult, nil, fields)
	}
	if cmd.Tokens == nil {
		result(map[string]any{"status": "failed", "reason": "missing tokens"})
		return
	}
	v := &c.ai
	tokens := *cmd.Tokens
	switch {
	case v.bufferedLen == 0 && strings.TrimSpace(tokens) == "":
	case v.bufferedLen+len(tokens) > ttsHighWater:
		if !v.full {
			v.full = true
			c.ttsStreamEvent(ctx, "stream_paused")
		}
		result(map[string]any{"status": "failed", "reason": "full"})
		return
	default:
		c.ttsBuffer(tokens)
		c.ttsFeed(ctx)
	}
	result(map[string]any{"status": "ok"})
	if v.awaiting == awaitToken && strings.TrimSpace(tokens) != "" {
		v.awaiting = awaitNothing
		v.readyAt, v.ready = c.elapsed(), true
	}
}

// ttsClear handles tts:clear: the buffer is dropped.
func (c *callRun) ttsClear() {
	v := &c.ai
	v.buffered, v.bufferedLen, v.full = nil, 0, false
	v.spoken.Reset()
}

// recordSpoken records what the agent said and keeps it for expectations.
func (c *callRun) recordSpoken(source, text string) {
	c.result.Spoken = append(c.result.Spoken, Spoken{Source: source, Text: text, Event: c.timeline.len()})
	c.record(Event{Kind: KindSpoken, Input: source, Value: text})
}

// Spoken is something the agent said to the caller (Result.Spoken).
type Spoken struct {
	// Source is "say", "tokens" (streamed with tts:tokens), "llm" or "bot".
	Source string
	Text   string
	// Event is its agent.spoke line in Result.Timeline.
	Event int
}
