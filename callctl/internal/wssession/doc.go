// Package wssession speaks the node's side of one WebSocket session with a jambonz
// application (docs/call-control.md §4): it opens the connection, numbers messages and
// pairs each request with its ack, decodes what the application sends and hands its
// commands to the call, repairs a dropped connection (reconnect episode,
// session:reconnect carrying the original session:new data, nothing else sent until
// that is acked, held messages and commands released after it), and injects a
// scenario's faults.
//
// Where a session stands is one State, changed only by the Events of the transition
// table in state.go. What the messages mean for the call (verbs, redirects, alerts,
// the call's end) is the caller's: package callctl implements Call.
package wssession
