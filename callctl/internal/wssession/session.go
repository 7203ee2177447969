package wssession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// Options describe the session of one call. Every field is required unless it says
// otherwise; callctl fills them from its own Options.
type Options struct {
	// Target is the application's URL with its retry policy, for the first dial
	// and for reconnect episodes.
	Target fragment.Target
	// CallSid rides on every message once session:new went out on the session:
	// jambonz's WebSocket requestor learns it from session:new (lib/utils/
	// ws-requestor.js), so a REST call's first call:status messages and every message
	// of a socket a redirect verb opened (session:redirect first) go without it.
	CallSid string
	// WebSocket configures the connection (HTTPClient, HandshakeTimeout,
	// MaxPayload, PingInterval, UserAgent, Header). Its Sleep, Observer and Logger
	// are the session's; abrupt faults replace HTTPClient.
	WebSocket wsclient.Options
	// AckTimeout is how long a request waits for its ack, in real time.
	AckTimeout time.Duration
	// Sleep waits d before attempt (counted from 1 in each dial or episode) of a
	// dial: the call's clock, which records the wait.
	Sleep func(ctx context.Context, attempt int, d time.Duration) error
	// Faults drop the connection after the N-th message; optional.
	Faults []Fault
	// Connect, when set, makes every connection of the session (the call's faulty
	// network); optional.
	Connect transport.ConnectFunc
	// EgressRules are the rules of the session's own transport, used only with
	// Connect or faults that drop the TCP connection without a close frame: they
	// must be those of WebSocket.HTTPClient.
	EgressRules transport.EgressRules
	// Logger receives the session's logs (carrying the call sid).
	Logger zerolog.Logger
}

// Fault drops the connection once the AfterMessage-th message of the session (sent
// or received) has gone through: with CloseCode, or abruptly (no close frame) when
// it is 0.
type Fault struct {
	AfterMessage int
	CloseCode    int
}

// Call is the call a session serves. The session reports to it what the timeline
// shows and hands it what the application asks for. Every method is called on the
// goroutine that is using the Session.
type Call interface {
	// Opened: a connection opened (the first, or a reconnect episode's).
	Opened()
	// Closed: a connection ended with code (1006 when there was no close frame),
	// whoever closed it.
	Closed(code int)
	// Sent and Received report each message. An unusable inbound frame is received
	// as "invalid", "binary" or "oversized". Sent has the message's hook and data
	// as they went out (session:new and session:reconnect data as JSON bytes).
	Sent(typ, msgid, hook string, data any)
	Received(m AppMessage)
	// Attempt reports one connection attempt; reconnect tells an episode's from the
	// first dial's.
	Attempt(a wsclient.Attempt, reconnect bool)
	// Answered reports a request's round trip: real time from sending the message
	// msgid to its ack.
	Answered(msgid string, d time.Duration)

	// Command applies a command of the application.
	Command(ctx context.Context, m AppMessage)
	// Invalid handles something unusable from the application: it raises the alert
	// and answers with Reject. content is the message as received, when it was
	// text.
	Invalid(ctx context.Context, err error, content []byte)
	// Resumed applies the data of the session:reconnect ack. standIn reports that
	// session:new was still waiting: this ack stands in for its
	// (docs/call-control.md §4), and Start returns no data of its own.
	Resumed(ctx context.Context, data json.RawMessage, standIn bool)
	// Lost: the connection could not be repaired; the call ends.
	Lost(detail string)
	// Ended reports whether the call has ended (a command may end it while the
	// session waits).
	Ended() bool
}

// maxReconnectDepth bounds drops during a session:reconnect wait.
const maxReconnectDepth = 5

// Session is the WebSocket session of one call. It is not safe for concurrent use:
// the call's goroutine drives it.
type Session struct {
	o      Options
	ws     wsclient.Options // o.WebSocket (emptied in o) with the session's hooks
	call   Call
	ctx    context.Context // the call's: what is read is handled on it
	faults *faultInjector

	state    State
	conn     *wsclient.Conn
	reconn   *wsclient.Reconnector
	attempts int // of the current dial or episode
	depth    int // nested reconnect episodes

	nextID     int
	sessionNew json.RawMessage // resent on every session:reconnect
	newID      string          // session:new's msgid while it waits
	starting   bool            // the next request is the one Start sends
	sidSent    bool            // session:new went out: call_sid rides on every message
	// early holds acks that arrived while session:reconnect waited for its own: the
	// request they answer picks them up.
	early map[string]json.RawMessage
	// heldOut are messages and heldCommands commands held while Resuming.
	heldOut      []outgoing
	heldCommands []AppMessage
}

// ErrAckTimeout: the application did not ack a request within Options.AckTimeout.
// The texts of these errors appear in the alerts of a call's timeline.
var ErrAckTimeout = errors.New("callctl: no ack in time")

// ErrSessionClosed: the application closed the session (1000), or the connection
// is gone for good: nothing more is sent.
var ErrSessionClosed = errors.New("callctl: session closed")

// ErrHandled is what Wait returns when it consumed a message itself (a command, an
// invalid message, a drop that was repaired): look at the call, then wait on.
var ErrHandled = errors.New("callctl: message handled")

// outgoing is a message held until session:reconnect is acked.
type outgoing struct {
	typ, id, hook string
	data          any
}

// New returns the session of a call, not connected yet. ctx is the call's context:
// what is read while a shorter one waits (a poll, a wait cut short) is handled on it.
func New(ctx context.Context, o Options, call Call) *Session {
	w := o.WebSocket
	// s.ws is the only copy kept: a live call holds its session for as long as it lasts.
	o.WebSocket = wsclient.Options{}
	s := &Session{o: o, call: call, ctx: ctx}
	// The hooks capture what they use, not o: a closure over o would keep another
	// copy of it on the heap.
	sleep := o.Sleep
	w.Sleep = func(ctx context.Context, d time.Duration) error { return sleep(ctx, s.attempts+1, d) }
	w.Observer = func(a wsclient.Attempt) {
		s.attempts = a.Number
		s.call.Attempt(a, s.state == Reconnecting)
	}
	// The client's own lines (connected, ended, reconnecting) are about this call.
	w.Logger = o.Logger
	s.faults = newFaultInjector(o.Faults, o.Connect, &w, o.EgressRules)
	s.ws = w
	return s
}

// State returns where the session stands.
func (s *Session) State() State { return s.state }

// Ended reports whether nothing more can be sent: the application closed the
// session, or it is gone.
func (s *Session) Ended() bool { return s.state == Closed || s.state == Gone }

// Starting reports whether session:new waits for its ack (or its stand-in).
func (s *Session) Starting() bool { return s.newID != "" }

// fire applies e. An event the table does not allow in the current state is a bug:
// it is logged and the session fails safe, as gone.
func (s *Session) fire(e Event) {
	to, ok := next(s.state, e)
	if !ok {
		s.o.Logger.Error().Str("state", s.state.String()).Str("event", e.String()).Msg("websocket session: event not allowed in this state")
		to = Gone
	}
	s.state = to
}

// Dial opens the first connection, with the retries of the target's policy. On
// failure the session is gone and the error is wsclient's.
func (s *Session) Dial(ctx context.Context) error {
	conn, err := wsclient.Dial(ctx, s.o.Target, s.ws)
	if err != nil {
		s.fire(Lose)
		return err
	}
	s.opened(conn)
	s.fire(Connected)
	return nil
}

func (s *Session) opened(conn *wsclient.Conn) {
	s.conn = conn
	s.call.Opened()
}

// Start sends session:new with data (encoded once: every session:reconnect resends
// exactly these bytes) and returns its ack's data. When the connection drops before
// the ack, the session:reconnect ack stands in for it (Call.Resumed with standIn)
// and Start returns nil data.
//
// typ is session:new, or session:redirect with its hook when a redirect verb moved
// the call to this application (jambonz's first message on the new socket).
func (s *Session) Start(ctx context.Context, typ, hook string, data json.RawMessage) (json.RawMessage, error) {
	s.sessionNew = data
	s.starting = true
	defer func() { s.newID = "" }()
	return s.request(ctx, typ, hook, data)
}

// Adult sends session:adulting with data, the first message of a dialed leg's own
// session, and returns its ack's data. A reconnect resends data, as jambonz keeps
// session:adulting's data for session:reconnect.
func (s *Session) Adult(ctx context.Context, data json.RawMessage) (json.RawMessage, error) {
	s.sessionNew = data
	return s.request(ctx, MsgSessionAdulting, "", data)
}

// Request sends a message that waits for an ack and returns the ack's data. While
// it waits, commands are applied and invalid messages answered; a drop runs a
// reconnect episode and the wait goes on (the application may ack on the new
// connection). It fails with ErrSessionClosed once the session or the call ended,
// with an error wrapping ErrAckTimeout after Options.AckTimeout, and with ctx's error
// when ctx ends.
func (s *Session) Request(ctx context.Context, typ, hook string, data any) (json.RawMessage, error) {
	return s.request(ctx, typ, hook, data)
}

func (s *Session) request(ctx context.Context, typ, hook string, data any) (json.RawMessage, error) {
	if s.Ended() {
		return nil, ErrSessionClosed
	}
	s.nextID++
	id := strconv.Itoa(s.nextID)
	if s.starting {
		s.newID, s.starting = id, false
	}
	// Acks are waited for in real time, whatever the call's clock.
	sent := time.Now()
	if err := s.deliver(ctx, typ, id, hook, data); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(s.o.AckTimeout)
	for {
		if s.Ended() || s.call.Ended() {
			return nil, ErrSessionClosed
		}
		if data, ok := s.early[id]; ok {
			delete(s.early, id)
			return data, nil
		}
		m, err := s.receive(ctx, deadline)
		switch {
		case err == nil:
			if m.Type == MsgAck && m.MsgID == id {
				s.call.Answered(id, time.Since(sent))
				return m.Data, nil
			}
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, fmt.Errorf("%s %s: %w (%s)", typ, id, ErrAckTimeout, s.o.AckTimeout)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
	}
}

// Notify sends a fire-and-forget message (call:status, verb:status), best effort:
// dropped when the session never opened or has ended.
func (s *Session) Notify(ctx context.Context, typ string, data any) {
	s.NotifyHook(ctx, typ, "", data)
}

// NotifyHook is Notify for the fire-and-forget messages that name a hook
// (llm:event, llm:tool-call).
func (s *Session) NotifyHook(ctx context.Context, typ, hook string, data any) {
	if s.conn == nil || s.Ended() {
		return
	}
	s.nextID++
	_ = s.deliver(ctx, typ, strconv.Itoa(s.nextID), hook, data)
}

// Reject answers something unusable from the application with jambonz:error
// {"msg":"InvalidMessage"}; the session goes on. Nothing is sent once it ended.
func (s *Session) Reject(ctx context.Context, err error, content []byte) {
	if s.Ended() {
		return
	}
	s.nextID++
	data := map[string]any{"msg": "InvalidMessage", "details": err.Error()}
	if content != nil {
		// jambonz quotes the message it could not use (lib/utils/ws-requestor.js).
		data["content"] = string(content)
	}
	_ = s.deliver(ctx, MsgJambonzError, strconv.Itoa(s.nextID), "", data)
}

// Poll handles, without waiting, what the application sent meanwhile (commands,
// invalid messages, a drop), as between two verbs.
func (s *Session) Poll(ctx context.Context) {
	if s.conn == nil || s.state == Gone {
		return
	}
	if s.state == Dropped {
		s.dropped(ctx, errInjectedDrop)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for !s.call.Ended() && s.state != Gone {
		if _, err := s.receive(done, time.Time{}); err != nil {
			return
		}
	}
}

// Wait reads and handles one message, waiting until deadline (real time; zero: as
// long as ctx lasts). It returns nil for an ack (of no request waiting: ignored),
// ErrHandled when it handled the message itself, ErrSessionClosed when the session
// is over, context.DeadlineExceeded when deadline passed, and ctx's error.
func (s *Session) Wait(ctx context.Context, deadline time.Time) error {
	_, err := s.receive(ctx, deadline)
	return err
}

// Close closes the connection with code and reason (1000 at the call's end, 1001
// when session:new failed) and ends the session; the code is reported (Call.Closed)
// unless the session had ended already. It does nothing before a connection opened.
func (s *Session) Close(code int, reason string) {
	s.faults.release()
	if s.conn == nil {
		return
	}
	if !s.Ended() {
		s.call.Closed(code)
	}
	_ = s.conn.Close(code, reason)
	s.fire(Close)
}

// resumed applies the session:reconnect ack: while session:new still waits, the ack
// stands in for it (its verbs start the call, and Start returns); then what was held
// meanwhile goes out, in order, and the commands held are applied.
func (s *Session) resumed(ctx context.Context, data json.RawMessage) {
	standIn := s.Starting()
	if standIn {
		s.keepEarly(s.newID, nil) // Start returns: the call has its verbs from Resumed
	}
	s.call.Resumed(ctx, data, standIn)
	out := s.heldOut
	s.heldOut = nil
	for _, m := range out {
		if err := s.deliver(ctx, m.typ, m.id, m.hook, m.data); err != nil {
			return // the session is gone; what is left is dropped with it
		}
	}
	cmds := s.heldCommands
	s.heldCommands = nil
	for _, m := range cmds {
		if s.state == Gone || s.call.Ended() {
			return
		}
		s.call.Command(ctx, m)
	}
}

// keepEarly keeps an ack for the request that waits for it.
func (s *Session) keepEarly(msgid string, data json.RawMessage) {
	if s.early == nil {
		s.early = map[string]json.RawMessage{}
	}
	s.early[msgid] = data
}
