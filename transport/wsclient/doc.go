// Package wsclient is the WebSocket client of call control (docs/call-control.md §1, §2,
// §4, §6 and §7), built on coder/websocket and dialing through the egress
// *http.Client of package transport.
//
// It owns opening a connection (subprotocol ws.jambonz.org, the opening handshake
// bounded by the handshake timeout, connect retries per the URL's rc/rp with the
// handshake-timeout rule), the connection itself (text messages only, the inbound
// size limit enforced per message without closing the socket, keepalive pings with
// pong tracking, close codes reported to the caller) and reconnect episodes after a
// mid-call drop (Reconnector).
//
// It does not know the jambonz message protocol (envelopes, msgid/ack correlation,
// session:reconnect): package callctl drives a *Conn and a *Reconnector and speaks
// that protocol itself. It does not read environment variables either: the fields of
// Options name the variable they come from, and featureserver fills them in.
package wsclient
