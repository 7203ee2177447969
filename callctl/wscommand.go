package callctl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
)

// Command applies a command from the application (wssession.Call) as jambonz's call
// session does (lib/session/call-session.js _onCommand; docs/compatibility.md §4):
// redirect replaces the remaining verbs (appends them with queueCommand) or moves the
// call to a call hook; call:status completed hangs up an answered call, no-answer
// rejects one not yet answered; the commands jambonz acts on only through media are
// logged. What jambonz would lose or ignore is ignored here too, with a compat
// warning: any command before the session:new ack (jambonz has no call session to
// give it to yet), a tag command, a command jambonz does not know.
func (a *wsApp) Command(ctx context.Context, m wssession.AppMessage) {
	c := a.c
	if a.s.Starting() {
		c.compat(CompatCommandBeforeAck, "the %s command came before the ack of session:new: jambonz has no call session to apply it to yet and loses it; send verbs in the ack instead", c.commandName(m.Command))
		return
	}
	if len(c.result.Commands) < maxRecordedRequests {
		c.result.Commands = append(c.result.Commands, Command{Name: m.Command, Data: redactJSON(m.Data), ToolCallID: m.ToolCallID,
			CallSid: m.CallSid, Event: c.timeline.len() - 1})
	}
	switch m.Command {
	case "redirect":
		a.redirectCommand(ctx, m)
	case "call:status":
		a.callStatusCommand(m)
	case "tag":
		c.compat(CompatTagCommand, "jambonz has no tag command and ignores it: customerData is unchanged (use the tag verb, or the REST API's tag)")
	case "whisper":
		c.whisper()
	case "tts:tokens":
		c.ttsTokens(ctx, m.Data)
	case "tts:flush":
		c.ttsFlush(ctx)
	case "tts:clear":
		c.ttsClear()
	case "llm:tool-output":
		c.toolOutput(ctx, m.ToolCallID, m.Data)
	case "llm:update":
		c.llmUpdate(m.Data)
	default:
		if !wssession.KnownCommand(m.Command) {
			c.compat(CompatUnknownCommand, "jambonz does not know the %s command: it logs it and ignores it, with no jambonz:error", c.commandName(m.Command))
			return
		}
		c.log(zerolog.InfoLevel).Str("command", m.Command).RawJSON("data", rawOrNull(m.Data)).Msg("command (no media to act on)")
	}
}

// redirectData is what a redirect command's data asks for (parseRedirect): verbs
// (replacing the remaining ones, or joining them with queueCommand), a call hook to
// move to and/or a child call hook to adult the dialed leg with, or new verbs for the
// call (parent). err says why jambonz could not use the data; ignored that it would
// not read it at all.
type redirectData struct {
	verbs     []verbs.Verb
	hook      string
	childHook string
	parent    []verbs.Verb
	err       error
	ignored   bool
}

// parseRedirect reads a redirect command's data as jambonz's _onCommand and
// _lccCallHook (lib/session/call-session.js) do: an array is verbs; an object with
// call_hook and/or child_call_hook (a URL or {"url": ...}) hooks; one with
// parent_call or child_call (arrays) verbs for either leg. Anything else is ignored.
//
// _lccCallHook only knows the dialed leg (sd) from the child_call_hook branch: with
// child_call, and no child_call_hook, it reads sd.callSid of undefined and throws
// before it applies anything, parent_call included (the rejection is only logged).
// Switchboard applies nothing either and says why (err).
func parseRedirect(data json.RawMessage) redirectData {
	if len(data) > 0 && data[0] == '[' {
		vs, err := verbs.Decode(data)
		return redirectData{verbs: vs, err: err}
	}
	var obj struct {
		CallHook      json.RawMessage `json:"call_hook"`
		ChildCallHook json.RawMessage `json:"child_call_hook"`
		ParentCall    json.RawMessage `json:"parent_call"`
		ChildCall     json.RawMessage `json:"child_call"`
	}
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &obj) != nil {
		return redirectData{ignored: true}
	}
	switch {
	case wssession.Truthy(obj.CallHook) || wssession.Truthy(obj.ChildCallHook):
		var r redirectData
		if wssession.Truthy(obj.CallHook) {
			if r.hook, r.err = callHookURL(obj.CallHook); r.err != nil {
				return r
			}
		}
		if wssession.Truthy(obj.ChildCallHook) {
			var err error
			if r.childHook, err = callHookURL(obj.ChildCallHook); err != nil {
				return redirectData{err: fmt.Errorf("child_call_hook: %w", err)}
			}
		}
		return r
	case wssession.Truthy(obj.ParentCall) || wssession.Truthy(obj.ChildCall):
		var r redirectData
		if wssession.Truthy(obj.ParentCall) && obj.ParentCall[0] != '[' {
			r.err = fmt.Errorf("parent_call must be an array")
			return r
		}
		if wssession.Truthy(obj.ChildCall) {
			r.err = fmt.Errorf("child_call without a child_call_hook: jambonz's _lccCallHook knows the dialed leg only from a child_call_hook, so it throws (reading callSid of undefined) and applies nothing, parent_call included; send {\"child_call_hook\": ...} to give the dialed leg an application")
			return r
		}
		r.parent, r.err = verbs.Decode(obj.ParentCall)
		return r
	}
	return redirectData{ignored: true}
}

// redirectCommand applies a redirect command (parseRedirect). jambonz ignores
// verbs that do not validate and data it does not read, with no jambonz:error.
func (a *wsApp) redirectCommand(ctx context.Context, m wssession.AppMessage) {
	c := a.c
	r := parseRedirect(m.Data)
	if r.err != nil && !c.quotable() {
		r.err = fmt.Errorf("data that does not validate (%s)", c.notQuoted())
	}
	switch {
	case r.err != nil:
		c.compat(CompatInvalidCommand, "redirect: %v; jambonz ignores the command (it only logs the error)", r.err)
	case r.ignored:
		c.compat(CompatRedirectCommandIgnored, "redirect data %s is neither verbs, {\"call_hook\": ...}, {\"child_call_hook\": ...} nor {\"parent_call\": [...]}: jambonz stops the verb playing and changes nothing else", c.quoteData(m.Data))
		c.cutShort()
	case r.hook != "" || r.childHook != "":
		if r.childHook != "" {
			// The dialed leg of the dial in progress becomes a session of its own, as
			// through the REST API (Control.ChildCallHook).
			c.childCallHook(ctx, r.childHook, r.hook == "")
		}
		if r.hook != "" {
			c.log(zerolog.InfoLevel).Str("url", fragment.Redact(r.hook)).Msg("redirect command to a call hook")
			c.redirect(ctx, r.hook)
			c.cutShort()
		}
	case r.parent != nil:
		c.replaceQueue(r.parent)
		c.cutShort()
	case m.QueueCommand:
		c.queue = append(c.queue, r.verbs...)
	default:
		c.replaceQueue(r.verbs)
		c.cutShort()
	}
}

// callStatusCommand applies call:status as jambonz's _lccCallStatus does: completed
// hangs up an answered call; no-answer rejects an inbound call not yet answered
// (SIP 503) or cancels an outbound one still ringing. Anything else, a bare string
// (what @jambonz/node-client-ws's injectCommand sends for call:status 'completed')
// among them, does nothing.
func (a *wsApp) callStatusCommand(m wssession.AppMessage) {
	c := a.c
	var st struct {
		CallStatus string `json:"call_status"`
	}
	if m.Data[0] != '{' || json.Unmarshal(m.Data, &st) != nil {
		c.compat(CompatCommandWithoutEffect, "call:status data %s is not an object {\"call_status\": ...}: jambonz reads no status from it and does nothing", c.quoteData(m.Data))
		return
	}
	switch {
	case st.CallStatus == string(StatusCompleted) && c.answered:
		c.hangup(ReasonAppHangup)
	case st.CallStatus == string(StatusNoAnswer) && !c.answered:
		if c.info.Direction == "inbound" {
			c.end(StatusNoAnswer, ReasonAppHangup, 503)
		} else {
			c.end(StatusNoAnswer, ReasonAppHangup, 487)
		}
	default:
		c.compat(CompatCommandWithoutEffect, "call:status %q on a call %s: jambonz does nothing (completed hangs up an answered call, no-answer one not yet answered)", st.CallStatus, answeredOrNot(c.answered))
	}
}

func answeredOrNot(answered bool) string {
	if answered {
		return "already answered"
	}
	return "not yet answered"
}

// callHookURL reads the call_hook of a redirect command: a URL string, or an object
// with a url (jambonz passes it to its requestor as a hook: hookURL).
func callHookURL(raw json.RawMessage) (string, error) {
	var v any
	_ = json.Unmarshal(raw, &v)
	if url := hookURL(v); url != "" {
		return url, nil
	}
	return "", fmt.Errorf("call_hook %s has no url", bodyStart(raw))
}

func rawOrNull(b json.RawMessage) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}
