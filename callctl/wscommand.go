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

// Command applies a command from the application (wssession.Call). redirect replaces the remaining
// verbs (or appends them with queueCommand); call:status completed (or no-answer)
// hangs up; tag replaces customerData; the others are validated and logged (no
// media to act on).
func (a *wsApp) Command(ctx context.Context, m wssession.AppMessage) {
	c := a.c
	cmd, err := parseCommand(m)
	if err != nil {
		a.Invalid(ctx, err)
		return
	}
	if len(c.result.Commands) < maxRecordedRequests {
		c.result.Commands = append(c.result.Commands, Command{Name: m.Command, Data: redactJSON(m.Data), ToolCallID: m.ToolCallID,
			CallSid: m.CallSid, Event: c.timeline.len() - 1})
	}
	switch m.Command {
	case "redirect":
		if a.s.Starting() {
			// Before the session:new ack, whose verbs the call starts with: the
			// redirect applies to them (startWith). An invalid one was answered now.
			a.deferred = append(a.deferred, m)
			return
		}
		if cmd.hook != "" {
			// A call hook instead of verbs: the call moves to that application, as
			// with a node's live call control (jambonz does the same).
			c.log(zerolog.InfoLevel).Str("url", fragment.Redact(cmd.hook)).Msg("redirect command to a new application")
			c.redirect(ctx, cmd.hook)
			c.cutShort()
			return
		}
		if m.QueueCommand {
			c.queue = append(c.queue, cmd.verbs...)
		} else {
			c.replaceQueue(cmd.verbs)
			c.cutShort()
		}
		c.log(zerolog.DebugLevel).Int("verbs", len(cmd.verbs)).Bool("queue", m.QueueCommand).Msg("redirect command")
	case "call:status":
		c.hangup(ReasonAppHangup)
	case "tag":
		c.info.CustomerData = cmd.tag
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
		c.log(zerolog.InfoLevel).Str("command", m.Command).RawJSON("data", rawOrNull(m.Data)).Msg("command (no media to act on)")
	}
}

// command is what a command's data asks for (parseCommand).
type command struct {
	verbs []verbs.Verb   // redirect: the verbs that replace (or join) the remaining ones
	hook  string         // redirect: the call hook the call moves to, instead of verbs
	tag   map[string]any // tag: the new customerData
}

// parseCommand reads the data of a command that DecodeAppMessage accepted: a
// redirect's verbs or call hook, call:status's status (only completed and no-answer,
// which hang up, are accepted), tag's object. Commands with no effect on a simulated
// call are taken as they are. Every error wraps wssession.ErrInvalidMessage.
func parseCommand(m wssession.AppMessage) (command, error) {
	switch m.Command {
	case "redirect":
		if len(m.Data) > 0 && m.Data[0] == '[' {
			vs, err := verbs.Decode(m.Data)
			if err != nil {
				return command{}, err
			}
			return command{verbs: vs}, nil
		}
		hook, err := redirectTarget(m.Data)
		return command{hook: hook}, err
	case "call:status":
		var st struct {
			CallStatus string `json:"call_status"`
		}
		if json.Unmarshal(m.Data, &st.CallStatus) != nil && json.Unmarshal(m.Data, &st) != nil {
			st.CallStatus = ""
		}
		switch st.CallStatus {
		case string(StatusCompleted), string(StatusNoAnswer):
			return command{}, nil
		}
		return command{}, fmt.Errorf("%w: call:status wants call_status completed or no-answer, got %q", wssession.ErrInvalidMessage, st.CallStatus)
	case "tag":
		var data map[string]any
		if err := json.Unmarshal(m.Data, &data); err != nil || data == nil {
			return command{}, fmt.Errorf("%w: tag data must be an object", wssession.ErrInvalidMessage)
		}
		return command{tag: data}, nil
	}
	return command{}, nil
}

// redirectTarget reads the call hook of a redirect command, in each form jambonz
// accepts: a URL string, {"url": ...}, {"call_hook": "<url>"} (what the official SDK's
// injectCommand sends) or {"call_hook": {"url": ...}}. The URL may be absolute or
// relative to the application.
func redirectTarget(data json.RawMessage) (string, error) {
	var url string
	if json.Unmarshal(data, &url) == nil && url != "" {
		return url, nil
	}
	var obj struct {
		URL      string          `json:"url"`
		CallHook json.RawMessage `json:"call_hook"`
	}
	if err := json.Unmarshal(data, &obj); err == nil {
		if obj.URL != "" {
			return obj.URL, nil
		}
		var hook struct {
			URL string `json:"url"`
		}
		switch {
		case json.Unmarshal(obj.CallHook, &url) == nil && url != "":
			return url, nil
		case json.Unmarshal(obj.CallHook, &hook) == nil && hook.URL != "":
			return hook.URL, nil
		}
	}
	return "", fmt.Errorf("%w: redirect data is neither verbs nor a call hook with a url", wssession.ErrInvalidMessage)
}

func rawOrNull(b json.RawMessage) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}
