package exampleapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of jambonz applications.
const Subprotocol = "ws.jambonz.org"

// WSApp is a jambonz WebSocket application: one connection per call. It acks
// session:new with the welcome document and verb:hook "/gather" with the answer to
// the caller's input (digit 9 instead gets an empty ack followed by a redirect
// command), acks session:reconnect without verbs so the call carries on where it
// was, and records everything it receives.
//
// With Waiting set it acks session:new with an answer verb alone (jambonz rejects an
// inbound call whose session:new is acked without verbs), so every call is answered
// and then waits for a command: HangupAll then ends them (the benchmark's minimal
// app).
type WSApp struct {
	Waiting bool

	mu       sync.Mutex
	received []Message
	live     map[*websocket.Conn]string // open sessions and their call_sid
	changed  chan struct{}              // closed (and replaced) when live changes
	wg       sync.WaitGroup
}

// Message is one message the app received.
type Message struct {
	Type    string          `json:"type"`
	MsgID   string          `json:"msgid"`
	CallSid string          `json:"call_sid"`
	Hook    string          `json:"hook,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ServeHTTP upgrades the request and serves one session until it closes.
func (a *WSApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return
	}
	a.wg.Add(1)
	defer a.wg.Done()
	a.mu.Lock()
	if a.live == nil {
		a.live = map[*websocket.Conn]string{}
	}
	a.live[conn] = ""
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.live, conn)
		a.liveChanged()
		a.mu.Unlock()
		_ = conn.CloseNow()
	}()
	ctx := r.Context()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m Message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		a.mu.Lock()
		a.received = append(a.received, m)
		if a.live[conn] == "" {
			a.live[conn] = m.CallSid
			a.liveChanged()
		}
		a.mu.Unlock()
		if err := a.handle(ctx, conn, m); err != nil {
			return
		}
	}
}

func (a *WSApp) handle(ctx context.Context, conn *websocket.Conn, m Message) error {
	switch m.Type {
	case "session:new":
		if a.Waiting {
			return ack(ctx, conn, m.MsgID, []verb{{"verb": "answer"}})
		}
		return ack(ctx, conn, m.MsgID, welcome("/gather"))
	case "session:redirect":
		// Live call control moved the call within this app: it starts over.
		return ack(ctx, conn, m.MsgID, welcome("/gather"))
	case "session:reconnect":
		return send(ctx, conn, map[string]any{"type": "ack", "msgid": m.MsgID})
	case "verb:hook":
		var p map[string]any
		_ = json.Unmarshal(m.Data, &p)
		reason, digits, transcript := gatherResult(p)
		if reason == "dtmfDetected" && digits == "9" {
			if err := send(ctx, conn, map[string]any{"type": "ack", "msgid": m.MsgID}); err != nil {
				return err
			}
			return send(ctx, conn, map[string]any{"type": "command", "command": "redirect", "data": []verb{
				{"verb": "say", "text": "You were redirected by a command."},
				{"verb": "hangup"},
			}})
		}
		return ack(ctx, conn, m.MsgID, answer(reason, digits, transcript))
	}
	return nil // call:status, verb:status, jambonz:error: notifications
}

func ack(ctx context.Context, conn *websocket.Conn, msgid string, vs []verb) error {
	return send(ctx, conn, map[string]any{"type": "ack", "msgid": msgid, "data": vs})
}

func send(ctx context.Context, conn *websocket.Conn, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, b)
}

// Received returns the messages received so far, in order.
func (a *WSApp) Received() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Message, len(a.received))
	copy(out, a.received)
	return out
}

// Live returns the number of open sessions that have sent session:new.
func (a *WSApp) Live() int {
	a.mu.Lock()
	n := a.liveLocked()
	a.mu.Unlock()
	return n
}

func (a *WSApp) liveLocked() int {
	n := 0
	for _, sid := range a.live {
		if sid != "" {
			n++
		}
	}
	return n
}

// liveChanged wakes the WaitLive callers; a.mu is held.
func (a *WSApp) liveChanged() {
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// WaitLive waits until Live is n, and returns ctx's error if ctx ends first.
func (a *WSApp) WaitLive(ctx context.Context, n int) error {
	for {
		a.mu.Lock()
		if a.liveLocked() == n {
			a.mu.Unlock()
			return nil
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d live sessions, want %d: %w", a.Live(), n, ctx.Err())
		}
	}
}

// HangupAll sends every open session a redirect command to a hangup verb.
func (a *WSApp) HangupAll(ctx context.Context) error {
	a.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(a.live))
	for c := range a.live {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, send(ctx, c, map[string]any{"type": "command", "command": "redirect",
			"data": []verb{{"verb": "hangup"}}}))
	}
	return errors.Join(errs...)
}

// Wait blocks until every session handler has returned (after the server closed
// the connections).
func (a *WSApp) Wait() { a.wg.Wait() }
