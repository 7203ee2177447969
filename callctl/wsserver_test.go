package callctl_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
)

// wsServer is a scriptable WebSocket application: handle runs once per connection
// (n counts connections from 1) and speaks the protocol by hand, so tests can
// misbehave exactly as they need.
type wsServer struct {
	t      *testing.T
	handle func(s *wsSession)
	conns  atomic.Int32
	// reject, when set, answers the upgrade of connection n with a status instead.
	reject func(n int) int

	mu       sync.Mutex
	received []map[string]any
}

type wsSession struct {
	srv  *wsServer
	ctx  context.Context
	conn *websocket.Conn
	n    int
}

func (w *wsServer) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	n := int(w.conns.Add(1))
	if w.reject != nil {
		if code := w.reject(n); code != 0 {
			http.Error(rw, "no", code)
			return
		}
	}
	conn, err := websocket.Accept(rw, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	w.handle(&wsSession{srv: w, ctx: r.Context(), conn: conn, n: n})
}

// read returns the next message, nil when the connection ended.
func (s *wsSession) read() map[string]any {
	_, b, err := s.conn.Read(s.ctx)
	if err != nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		s.srv.t.Errorf("node sent invalid JSON %q", b)
		return nil
	}
	s.srv.mu.Lock()
	s.srv.received = append(s.srv.received, m)
	s.srv.mu.Unlock()
	return m
}

// next returns the next message of type typ, skipping others; nil at the end.
func (s *wsSession) next(typ string) map[string]any {
	for {
		m := s.read()
		if m == nil || m["type"] == typ {
			return m
		}
	}
}

func (s *wsSession) send(v any) {
	b, _ := json.Marshal(v)
	s.raw(string(b))
}

func (s *wsSession) raw(text string) {
	_ = s.conn.Write(s.ctx, websocket.MessageText, []byte(text))
}

// ack acknowledges m with verbs (nil: an ack without data).
func (s *wsSession) ack(m map[string]any, verbs ...map[string]any) {
	a := map[string]any{"type": "ack", "msgid": m["msgid"]}
	if verbs != nil {
		a["data"] = verbs
	}
	s.send(a)
}

// drain reads until the connection ends.
func (s *wsSession) drain() {
	for s.read() != nil {
	}
}

// messages returns the types of every message received, across connections.
func (w *wsServer) messages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range w.received {
		out = append(out, m["type"].(string))
	}
	return out
}

func (w *wsServer) find(typ string) []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for _, m := range w.received {
		if m["type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

func say(text string) map[string]any { return map[string]any{"verb": "say", "text": text} }

var hangupVerb = map[string]any{"verb": "hangup"}

func newWS(t *testing.T, handle func(s *wsSession)) (*wsServer, string) {
	srv := &wsServer{t: t, handle: handle}
	return srv, serve(t, srv, true)
}
