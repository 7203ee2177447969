package callctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// errHandled means an inbound message was consumed (a command, an invalid
// message, a drop that was repaired): the caller keeps waiting.
var errHandled = errors.New("callctl: message handled")

// maxReconnectDepth bounds drops during a session:reconnect wait.
const maxReconnectDepth = 5

// deliver writes a message; when the write finds the connection dropped, a
// reconnect episode runs and the message goes out on the new connection, after
// session:reconnect was acked (§4: other messages are queued until then).
func (a *wsApp) deliver(ctx context.Context, typ, id, hook string, data any) error {
	if a.awaitingReconnect {
		a.heldOut = append(a.heldOut, outgoing{typ: typ, id: id, hook: hook, data: data})
		return nil
	}
	for range maxReconnectDepth {
		if a.graceful || a.gone {
			return ErrSessionClosed
		}
		if a.dropPending {
			if !a.dropped(ctx, errInjectedDrop) {
				return ErrSessionClosed
			}
			continue
		}
		err := a.send(ctx, typ, id, hook, data)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !a.dropped(ctx, err) {
			return ErrSessionClosed
		}
	}
	return ErrSessionClosed
}

// receive reads and handles one inbound message, waiting until deadline (zero: as
// long as ctx lasts). It returns acks to the caller; commands are applied, invalid
// messages answered, drops repaired, and errHandled returned. A deadline that
// passes gives context.DeadlineExceeded.
func (a *wsApp) receive(ctx context.Context, deadline time.Time) (AppMessage, error) {
	if a.dropPending {
		// Handled before reading, so the drop shows where the scenario put it.
		if a.dropped(ctx, errInjectedDrop) {
			return AppMessage{}, errHandled
		}
		return AppMessage{}, ErrSessionClosed
	}
	rctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	raw, err := a.conn.Read(rctx)
	// What was read is handled on the call's context: ctx may be one that already
	// ended (between's non-blocking poll, a wait cut short by a live-call command),
	// and answering, reconnecting or following a redirect must not fail for that.
	if ctx.Err() != nil && a.c.ctx != nil && a.c.ctx.Err() == nil {
		ctx = a.c.ctx
	}
	if err != nil {
		isEnd := errors.Is(err, wsclient.ErrDropped) || errors.Is(err, wsclient.ErrNormalClosure) || errors.Is(err, wsclient.ErrClosed)
		if !isEnd && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return AppMessage{}, err
		}
		return AppMessage{}, a.readFailed(ctx, err)
	}
	m, err := DecodeAppMessage(raw)
	if err != nil {
		a.c.recordMsg(KindMsgRecv, "invalid", "")
		a.invalid(ctx, err)
		a.faults.counted(ctx, a)
		return AppMessage{}, errHandled
	}
	a.c.recordMsg(KindMsgRecv, m.Type, m.MsgID)
	if m.Type == MsgCommand && a.awaitingReconnect {
		// Applied once session:reconnect is acked: its effects may send.
		a.heldCommands = append(a.heldCommands, m)
		a.faults.counted(ctx, a)
		return AppMessage{}, errHandled
	}
	if m.Type == MsgCommand {
		a.command(ctx, m)
		a.faults.counted(ctx, a)
		return AppMessage{}, errHandled
	}
	a.faults.counted(ctx, a)
	return m, nil
}

// readFailed handles a Read error that is not the caller's deadline.
func (a *wsApp) readFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, wsclient.ErrBinaryFrame):
		a.c.recordMsg(KindMsgRecv, "binary", "")
		a.invalid(ctx, fmt.Errorf("%w: %v", ErrInvalidMessage, err))
		a.faults.counted(ctx, a)
		return errHandled
	case errors.Is(err, wsclient.ErrMessageTooLarge) && !errors.Is(err, wsclient.ErrDropped):
		a.c.recordMsg(KindMsgRecv, "oversized", "")
		a.invalid(ctx, fmt.Errorf("%w: %v", ErrInvalidMessage, err))
		a.faults.counted(ctx, a)
		return errHandled
	}
	if a.dropped(ctx, err) {
		return errHandled
	}
	return ErrSessionClosed
}

// dropped handles the end of the connection. A close with 1000 from the app is a
// graceful end of the session (false). Any other end starts a reconnect episode;
// it reports whether the session is back (session:reconnect acked).
func (a *wsApp) dropped(ctx context.Context, cause error) bool {
	c := a.c
	if a.graceful || a.gone {
		return false
	}
	if errors.Is(cause, wsclient.ErrNormalClosure) {
		c.recordClose(1000)
		a.graceful = true
		_ = a.conn.Close(1000, "")
		return false
	}
	a.dropPending = false
	code := wsclient.CloseStatus(cause)
	if code < 0 {
		code = 1006 // no close frame: abnormal closure
	}
	if a.faults.injected {
		code, a.faults.injected = a.faults.code, false
	}
	c.recordClose(code)
	_ = a.conn.Close(1000, "")
	if c.ended || ctx.Err() != nil {
		a.gone = true
		return false
	}
	if a.reconnectDepth >= maxReconnectDepth {
		return a.lost(fmt.Sprintf("connection dropped %d times during session:reconnect", a.reconnectDepth))
	}
	a.reconnectDepth++
	defer func() { a.reconnectDepth-- }()
	a.reconnecting, a.attemptsSoFar = true, 0
	if a.reconn == nil {
		// Made on the first drop: most calls never need one.
		r, err := wsclient.NewReconnector(c.opts.app, a.wsOpts)
		if err != nil {
			return a.lost(fmt.Sprintf("reconnect: %v", err))
		}
		a.reconn = r
	}
	conn, err := a.reconn.Next(ctx)
	a.reconnecting = false
	if err != nil {
		return a.lost(fmt.Sprintf("reconnect to %s failed: %v", c.opts.app.Clean(), err))
	}
	a.opened(conn)
	a.nextID++
	id := fmt.Sprint(a.nextID)
	if err := a.send(ctx, msgSessionReconnect, id, "", a.sessionNew); err != nil {
		return a.dropped(ctx, err)
	}
	// Until the ack, nothing else goes out (a nested episode sets this again).
	a.awaitingReconnect = true
	defer func() { a.awaitingReconnect = false }()
	deadline := time.Now().Add(c.opts.AckTimeout)
	for {
		m, err := a.receive(ctx, deadline)
		switch {
		case err == nil && m.MsgID == id:
			a.awaitingReconnect = false
			a.reconnected(ctx, m.Data)
			a.releaseHeld(ctx)
			return true
		case err == nil:
			// An ack of a request sent before the drop, answered on the new
			// connection ahead of session:reconnect.
			if a.early == nil {
				a.early = map[string]json.RawMessage{}
			}
			a.early[m.MsgID] = m.Data
		case errors.Is(err, errHandled):
			if a.gone || a.graceful || c.ended {
				return !a.gone && !c.ended
			}
			if a.conn != conn {
				return true // a nested drop was repaired, and acked, meanwhile
			}
		case err != nil:
			if ctx.Err() != nil {
				a.gone = true
				return false
			}
			_ = a.conn.Close(1000, "")
			if errors.Is(err, context.DeadlineExceeded) {
				err = ErrAckTimeout
			}
			return a.lost(fmt.Sprintf("session:reconnect %s: %v", id, err))
		}
	}
}

// reconnected applies the session:reconnect ack: while session:new still waits,
// its verbs start the call (§4); mid-call, verbs in it replace the remaining ones.
func (a *wsApp) reconnected(ctx context.Context, data json.RawMessage) {
	vs := a.ackVerbs(ctx, data)
	if a.starting {
		a.standIn, a.hasIn = vs, true
		return
	}
	if len(vs) > 0 {
		a.c.queue = vs
	}
}

// releaseHeld sends, in order, what waited for the session:reconnect ack, then
// applies the commands that arrived meanwhile.
func (a *wsApp) releaseHeld(ctx context.Context) {
	out := a.heldOut
	a.heldOut = nil
	for _, m := range out {
		if err := a.deliver(ctx, m.typ, m.id, m.hook, m.data); err != nil {
			return // the session is gone; what is left is dropped with it
		}
	}
	a.applyHeldCommands(ctx)
}

// applyHeldCommands applies, in order, the commands held while an ack was awaited.
func (a *wsApp) applyHeldCommands(ctx context.Context) {
	cmds := a.heldCommands
	a.heldCommands = nil
	for _, m := range cmds {
		if a.gone || a.c.ended {
			return
		}
		a.command(ctx, m)
	}
}

// lost ends the call after a drop that could not be repaired (§6).
func (a *wsApp) lost(detail string) bool {
	c := a.c
	a.gone = true
	c.alert(AlertWebhookConnectionFailure, c.opts.app.Clean(), detail)
	if c.answered {
		c.end(StatusCompleted, ReasonReconnectFailed, 200)
	} else {
		c.end(StatusFailed, ReasonReconnectFailed, c.opts.WebhookErrorReturn)
	}
	return false
}

// command applies a command from the application. redirect replaces the remaining
// verbs (or appends them with queueCommand); call:status completed (or no-answer)
// hangs up; tag replaces customerData; the others are validated and logged (no
// media to act on).
func (a *wsApp) command(ctx context.Context, m AppMessage) {
	c := a.c
	switch m.Command {
	case "redirect":
		if m.Data[0] != '[' {
			// A call hook instead of verbs: the call moves to that application, as
			// with a node's live call control (jambonz does the same).
			url, err := redirectTarget(m.Data)
			if err != nil {
				a.invalid(ctx, err)
				return
			}
			if a.starting {
				a.heldCommands = append(a.heldCommands, m) // see below
				return
			}
			c.log(zerolog.InfoLevel).Str("url", url).Msg("redirect command to a new application")
			c.redirect(ctx, url)
			return
		}
		vs, err := verbs.Decode(m.Data)
		if err != nil {
			a.invalid(ctx, err)
			return
		}
		if a.starting {
			// Before the session:new ack, whose verbs the call starts with: the
			// redirect applies to them (startWith). An invalid one is answered now.
			a.heldCommands = append(a.heldCommands, m)
			return
		}
		if m.QueueCommand {
			c.queue = append(c.queue, vs...)
		} else {
			c.queue = vs
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
			a.invalid(ctx, fmt.Errorf("%w: call:status wants call_status completed or no-answer, got %q", ErrInvalidMessage, st.CallStatus))
		}
	case "tag":
		var data map[string]any
		if err := json.Unmarshal(m.Data, &data); err != nil {
			a.invalid(ctx, fmt.Errorf("%w: tag data: %v", ErrInvalidMessage, err))
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
	return "", fmt.Errorf("%w: redirect data is neither verbs nor a call hook with a url", ErrInvalidMessage)
}

func rawOrNull(b json.RawMessage) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}
