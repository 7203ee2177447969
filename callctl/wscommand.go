package callctl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// Command applies a command from the application (wssession.Call). redirect replaces the remaining
// verbs (or appends them with queueCommand); call:status completed (or no-answer)
// hangs up; tag replaces customerData; the others are validated and logged (no
// media to act on).
func (a *wsApp) Command(ctx context.Context, m wssession.AppMessage) {
	c := a.c
	switch m.Command {
	case "redirect":
		if m.Data[0] != '[' {
			// A call hook instead of verbs: the call moves to that application, as
			// with a node's live call control (jambonz does the same).
			url, err := redirectTarget(m.Data)
			if err != nil {
				a.Invalid(ctx, err)
				return
			}
			if a.s.Starting() {
				a.deferred = append(a.deferred, m) // see below
				return
			}
			c.log(zerolog.InfoLevel).Str("url", url).Msg("redirect command to a new application")
			c.redirect(ctx, url)
			c.cutShort()
			return
		}
		vs, err := verbs.Decode(m.Data)
		if err != nil {
			a.Invalid(ctx, err)
			return
		}
		if a.s.Starting() {
			// Before the session:new ack, whose verbs the call starts with: the
			// redirect applies to them (startWith). An invalid one is answered now.
			a.deferred = append(a.deferred, m)
			return
		}
		if m.QueueCommand {
			c.queue = append(c.queue, vs...)
		} else {
			c.queue = vs
			c.cutShort()
		}
		c.log(zerolog.DebugLevel).Int("verbs", len(vs)).Bool("queue", m.QueueCommand).Msg("redirect command")
	case "call:status":
		var st struct {
			CallStatus string `json:"call_status"`
		}
		if json.Unmarshal(m.Data, &st.CallStatus) != nil && json.Unmarshal(m.Data, &st) != nil {
			st.CallStatus = ""
		}
		switch st.CallStatus {
		case string(StatusCompleted), string(StatusNoAnswer):
			c.hangup(ReasonAppHangup)
		default:
			a.Invalid(ctx, fmt.Errorf("%w: call:status wants call_status completed or no-answer, got %q", wssession.ErrInvalidMessage, st.CallStatus))
		}
	case "tag":
		var data map[string]any
		if err := json.Unmarshal(m.Data, &data); err != nil {
			a.Invalid(ctx, fmt.Errorf("%w: tag data: %v", wssession.ErrInvalidMessage, err))
			return
		}
		c.info.CustomerData = data
	default:
		c.log(zerolog.InfoLevel).Str("command", m.Command).RawJSON("data", rawOrNull(m.Data)).Msg("command (no media to act on)")
	}
}

// redirectTarget reads the call hook of a redirect command: a URL string, {"url":...}
// or {"call_hook": {"url":...}}.
func redirectTarget(data json.RawMessage) (string, error) {
	var url string
	if json.Unmarshal(data, &url) == nil && url != "" {
		return url, nil
	}
	var obj struct {
		URL      string `json:"url"`
		CallHook *struct {
			URL string `json:"url"`
		} `json:"call_hook"`
	}
	if err := json.Unmarshal(data, &obj); err == nil {
		if obj.URL != "" {
			return obj.URL, nil
		}
		if obj.CallHook != nil && obj.CallHook.URL != "" {
			return obj.CallHook.URL, nil
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
