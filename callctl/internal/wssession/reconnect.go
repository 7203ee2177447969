package wssession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// dropped handles the end of the connection (docs/call-control.md §4). A close with
// 1000 from the application is a graceful end of the session (false). Any other end
// starts a reconnect episode; dropped reports whether the session is back
// (session:reconnect acked).
func (s *Session) dropped(ctx context.Context, cause error) bool {
	if s.Ended() {
		return false
	}
	if errors.Is(cause, wsclient.ErrNormalClosure) {
		s.call.Closed(1000)
		s.fire(PeerClosed)
		_ = s.conn.Close(1000, "")
		return false
	}
	s.fire(Drop)
	code := wsclient.CloseStatus(cause)
	if code < 0 {
		code = 1006 // no close frame: abnormal closure
	}
	if s.faults.injected {
		code, s.faults.injected = s.faults.code, false
	}
	s.call.Closed(code)
	_ = s.conn.Close(1000, "")
	if s.call.Ended() || ctx.Err() != nil {
		s.fire(Abandon)
		return false
	}
	if s.depth >= maxReconnectDepth {
		return s.lose(fmt.Sprintf("connection dropped %d times during session:reconnect", s.depth))
	}
	s.depth++
	defer func() { s.depth-- }()
	s.fire(Redial)
	s.attempts = 0
	if s.reconn == nil {
		// Made on the first drop: most calls never need one.
		r, err := wsclient.NewReconnector(s.o.Target, s.ws)
		if err != nil {
			return s.lose(fmt.Sprintf("reconnect: %v", err))
		}
		s.reconn = r
	}
	conn, err := s.reconn.Next(ctx)
	if err != nil {
		var de *wsclient.DialError
		if s.call.Ended() || ctx.Err() != nil || errors.As(err, &de) && de.Class == retry.Canceled {
			// The call stopped the episode (it ended, its context did, or its Sleep
			// cut a wait short): nothing the application did, so no alert.
			s.fire(Abandon)
			return false
		}
		return s.lose(fmt.Sprintf("reconnect to %s failed: %v", s.o.Target.Clean(), err))
	}
	s.opened(conn)
	// Until the ack, nothing else goes out (a nested episode holds again).
	s.fire(Redialed)
	s.nextID++
	id := fmt.Sprint(s.nextID)
	sent := time.Now()
	data := s.sessionNew
	if data == nil {
		// Before session:new (an outbound call's first statuses), jambonz sends the
		// session data it does not have yet as {} (lib/utils/ws-requestor.js).
		data = json.RawMessage(`{}`)
	}
	if err := s.send(ctx, MsgSessionReconnect, id, "", data); err != nil {
		return s.dropped(ctx, err)
	}
	deadline := time.Now().Add(s.o.AckTimeout)
	for {
		m, err := s.receive(ctx, deadline)
		switch {
		case err == nil && m.MsgID == id:
			s.call.Answered(id, time.Since(sent))
			s.fire(Resumed)
			s.resumed(ctx, m.Data)
			return true
		case err == nil:
			// An ack of a request sent before the drop, answered on the new
			// connection ahead of session:reconnect.
			s.keepEarly(m.MsgID, m.Data)
		case errors.Is(err, ErrHandled):
			if s.Ended() || s.call.Ended() {
				return s.state != Gone && !s.call.Ended()
			}
			if s.conn != conn {
				return true // a nested drop was repaired, and acked, meanwhile
			}
		default:
			if ctx.Err() != nil {
				s.fire(Abandon)
				return false
			}
			_ = s.conn.Close(1000, "")
			if errors.Is(err, context.DeadlineExceeded) {
				err = ErrAckTimeout
			}
			return s.lose(fmt.Sprintf("session:reconnect %s: %v", id, err))
		}
	}
}

// lose ends the session after a drop that could not be repaired
// (docs/call-control.md §6).
func (s *Session) lose(detail string) bool {
	s.fire(Lose)
	s.call.Lost(detail)
	return false
}
