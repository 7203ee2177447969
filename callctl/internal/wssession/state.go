package wssession

import "fmt"

// State is where a session stands. It changes only through next: the table there
// is the whole life of a session.
type State uint8

// The states of a session.
const (
	// Idle: no connection yet.
	Idle State = iota
	// Open: connected; messages flow both ways (session:new may still wait for its
	// ack: that is a request in flight, not a state).
	Open
	// Dropped: the connection ended without a close 1000 from the application (or a
	// scenario fault cut it); a reconnect episode is due at the next read or write.
	Dropped
	// Reconnecting: a reconnect episode is dialing.
	Reconnecting
	// Resuming: reconnected; session:reconnect waits for its ack, and every other
	// message, either way, is held until it comes.
	Resuming
	// Closed: the application closed with 1000, a graceful end: nothing more is
	// sent, nothing is repaired.
	Closed
	// Gone: the node closed the session, or it could not be repaired. Final.
	Gone
)

var stateNames = [...]string{"idle", "open", "dropped", "reconnecting", "resuming", "closed", "gone"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// Event is what happens to a session.
type Event uint8

// The events of a session.
const (
	// Connected: the first connection opened.
	Connected Event = iota
	// Drop: the connection ended abnormally, or a fault cut it.
	Drop
	// Redial: a reconnect episode starts.
	Redial
	// Redialed: the episode opened a new connection.
	Redialed
	// Resumed: session:reconnect was acked.
	Resumed
	// PeerClosed: the application closed with 1000.
	PeerClosed
	// Abandon: the call ended (or its context did, or it cut a reconnect's wait
	// short) while the session was being repaired: the repair stops, no alert.
	Abandon
	// Lose: the session cannot be used or repaired: the first connection failed, the
	// episode's budget ran out, session:reconnect was not acked.
	Lose
	// Close: the node closes the session (the call ended, moved elsewhere, or its
	// session:new failed).
	Close
)

var eventNames = [...]string{"connected", "drop", "redial", "redialed", "resumed", "peer-closed", "abandon", "lose", "close"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("Event(%d)", e)
}

// next is the transition table: the state after e in s, and whether e can happen in
// s at all. Closing, losing or abandoning a session that is already gone changes
// nothing (a repair fails inside another, then the call ends it too).
func next(s State, e Event) (State, bool) {
	switch e {
	case Connected:
		if s == Idle {
			return Open, true
		}
	case Drop:
		// A drop while session:reconnect waits (a nested episode) starts over; two
		// faults due at the same message are one drop.
		if s == Open || s == Resuming || s == Dropped {
			return Dropped, true
		}
	case Redial:
		if s == Dropped {
			return Reconnecting, true
		}
	case Redialed:
		if s == Reconnecting {
			return Resuming, true
		}
	case Resumed:
		if s == Resuming {
			return Open, true
		}
	case PeerClosed:
		if s == Open || s == Resuming {
			return Closed, true
		}
	case Abandon:
		if s == Dropped || s == Reconnecting || s == Resuming || s == Closed || s == Gone {
			return Gone, true
		}
	case Lose:
		if s != Open {
			return Gone, true
		}
	case Close:
		if s != Idle && s != Reconnecting {
			return Gone, true
		}
	}
	return s, false
}
