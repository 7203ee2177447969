package wsclient

import (
	"errors"

	"github.com/coder/websocket"
)

// Errors of one inbound message. The message is discarded and the connection stays
// open: the session goes on (docs/call-control.md §4).
var (
	// ErrBinaryFrame: the application sent a binary message; only text is accepted.
	ErrBinaryFrame = errors.New("wsclient: binary message refused (text only)")
	// ErrMessageTooLarge: a message exceeded Options.MaxPayload. When it also exceeds
	// the hard cap (HardCapFactor × MaxPayload) the connection is closed with 1009 and
	// the error is wrapped in ErrDropped.
	ErrMessageTooLarge = errors.New("wsclient: message exceeds the maximum payload")
)

// Errors that end a connection. Read returns one of them (wrapped) once the
// connection is over, and keeps returning it.
var (
	// ErrNormalClosure: the application closed the connection with status 1000, a
	// graceful end of the session: do not reconnect.
	ErrNormalClosure = errors.New("wsclient: application closed the connection normally (1000)")
	// ErrDropped: the connection was lost: a close status other than 1000, a read or
	// write error, missed pongs or a message over the hard cap. Reconnect.
	ErrDropped = errors.New("wsclient: connection dropped")
	// ErrPongTimeout is wrapped with ErrDropped when two pongs in a row are missing.
	ErrPongTimeout = errors.New("wsclient: no pong for two ping intervals")
	// ErrClosed: the connection was closed by Close on our side.
	ErrClosed = errors.New("wsclient: connection closed")
)

// Errors of opening a connection.
var (
	// ErrSubprotocol: the application did not select the ws.jambonz.org subprotocol.
	// jambonz's own client (the node "ws" package) refuses such a server, so jambonz
	// applications always echo it; we refuse it too (class retry.Unparseable).
	ErrSubprotocol = errors.New("wsclient: application did not select subprotocol " + Subprotocol)
	// ErrNoReconnectBudget: rc=0 leaves a reconnect episode no attempt at all.
	ErrNoReconnectBudget = errors.New("wsclient: rc=0 allows no reconnect attempt")
	// ErrInvalidOptions is wrapped by the error Dial and NewReconnector return for
	// Options out of range.
	ErrInvalidOptions = errors.New("wsclient: invalid options")
)

// CloseStatus returns the WebSocket close status the peer sent, found anywhere in
// err's chain, or -1 when err carries none (a read error, missed pongs, a local
// Close). 1000 is a graceful end; anything else is a drop.
func CloseStatus(err error) int {
	return int(websocket.CloseStatus(err))
}
