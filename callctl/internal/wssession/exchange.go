package wssession

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/internal/jsjson"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// send writes one message to the application and reports it.
func (s *Session) send(ctx context.Context, typ, id, hook string, data any) error {
	// Written as JSON.stringify writes it, as jambonz's messages are (docs/call-control.md §3).
	if typ == MsgSessionNew {
		s.sidSent = true
	}
	sid := ""
	if s.sidSent {
		sid = s.o.CallSid
	}
	b, err := jsjson.Marshal(envelope{Type: typ, MsgID: id, CallSid: sid, Hook: hook, Data: data})
	if err != nil {
		return fmt.Errorf("callctl: encoding %s: %w", typ, err)
	}
	if err := s.conn.Write(ctx, b); err != nil {
		return err
	}
	s.call.Sent(typ, id, hook, data)
	s.faults.counted(s)
	return nil
}

// deliver writes a message; when the write finds the connection dropped, a reconnect
// episode runs and the message goes out on the new connection, after session:reconnect
// was acked (docs/call-control.md §4: other messages are held until then).
func (s *Session) deliver(ctx context.Context, typ, id, hook string, data any) error {
	if s.state == Resuming {
		s.heldOut = append(s.heldOut, outgoing{typ: typ, id: id, hook: hook, data: data})
		return nil
	}
	for range maxReconnectDepth {
		if s.Ended() {
			return ErrSessionClosed
		}
		if s.state == Dropped {
			if !s.dropped(ctx, errInjectedDrop) {
				return ErrSessionClosed
			}
			continue
		}
		err := s.send(ctx, typ, id, hook, data)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !s.dropped(ctx, err) {
			return ErrSessionClosed
		}
	}
	return ErrSessionClosed
}

// receive reads and handles one inbound message, waiting until deadline (zero: as
// long as ctx lasts). It returns acks to the caller; commands are applied, invalid
// messages answered, drops repaired, and ErrHandled returned. A deadline that
// passes gives context.DeadlineExceeded.
func (s *Session) receive(ctx context.Context, deadline time.Time) (AppMessage, error) {
	if s.state == Dropped {
		// Handled before reading, so the drop shows where the scenario put it.
		if s.dropped(ctx, errInjectedDrop) {
			return AppMessage{}, ErrHandled
		}
		return AppMessage{}, ErrSessionClosed
	}
	rctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	raw, err := s.conn.Read(rctx)
	// What was read is handled on the call's context: ctx may be one that already
	// ended (Poll's non-blocking read, a wait cut short by a live-call command), and
	// answering, reconnecting or following a redirect must not fail for that.
	if ctx.Err() != nil && s.ctx != nil && s.ctx.Err() == nil {
		ctx = s.ctx
	}
	if err != nil {
		isEnd := errors.Is(err, wsclient.ErrDropped) || errors.Is(err, wsclient.ErrNormalClosure) || errors.Is(err, wsclient.ErrClosed)
		if !isEnd && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return AppMessage{}, err
		}
		return AppMessage{}, s.readFailed(ctx, err)
	}
	m, err := DecodeAppMessage(raw)
	if err != nil {
		s.call.Received(AppMessage{Type: "invalid"})
		s.call.Invalid(ctx, err, raw)
		s.faults.counted(s)
		return AppMessage{}, ErrHandled
	}
	s.call.Received(m)
	if m.Type == MsgCommand && s.state == Resuming {
		// Applied once session:reconnect is acked: its effects may send.
		s.heldCommands = append(s.heldCommands, m)
		s.faults.counted(s)
		return AppMessage{}, ErrHandled
	}
	if m.Type == MsgCommand {
		s.call.Command(ctx, m)
		s.faults.counted(s)
		return AppMessage{}, ErrHandled
	}
	s.faults.counted(s)
	return m, nil
}

// readFailed handles a Read error that is not the caller's deadline.
func (s *Session) readFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, wsclient.ErrBinaryFrame):
		s.call.Received(AppMessage{Type: "binary"})
		s.call.Invalid(ctx, fmt.Errorf("%w: %v", ErrInvalidMessage, err), nil)
		s.faults.counted(s)
		return ErrHandled
	case errors.Is(err, wsclient.ErrMessageTooLarge) && !errors.Is(err, wsclient.ErrDropped):
		s.call.Received(AppMessage{Type: "oversized"})
		s.call.Invalid(ctx, fmt.Errorf("%w: %v", ErrInvalidMessage, err), nil)
		s.faults.counted(s)
		return ErrHandled
	}
	if s.dropped(ctx, err) {
		return ErrHandled
	}
	return ErrSessionClosed
}
