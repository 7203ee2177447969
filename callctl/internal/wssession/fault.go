package wssession

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// faultInjector drops a session's connection after the N-th message
// (Options.Faults). For a drop without a close frame it needs the TCP connection, and
// the call's faulty network (Options.Connect) must make every connection, so in
// either case it dials the session's WebSockets through a transport of its own: an
// egress client under the rules given, so that the URL and every address are checked
// as on any other dial (docs/call-control.md §5).
type faultInjector struct {
	faults []Fault
	count  int

	client *http.Client // the session's own transport, when it has one

	mu   sync.Mutex
	last net.Conn // the latest connection dialed for this session

	injected bool // a drop was injected: the next ws.close reports code
	code     int
}

// errInjectedDrop is the cause of a drop the node injected itself.
var errInjectedDrop = errors.New("callctl: drop injected by the scenario")

func newFaultInjector(faults []Fault, connect transport.ConnectFunc, o *wsclient.Options, rules transport.EgressRules) *faultInjector {
	f := &faultInjector{faults: faults}
	abrupt := false
	for _, x := range faults {
		abrupt = abrupt || x.CloseCode == 0
	}
	if !abrupt && connect == nil {
		return f
	}
	timeout := o.HandshakeTimeout
	if timeout <= 0 {
		timeout = wsclient.DefaultHandshakeTimeout
	}
	f.client = transport.NewHTTPClient(rules, transport.ClientOptions{
		ConnectTimeout:    timeout,
		DisableKeepAlives: true, // a connection per attempt (docs/call-control.md §4)
		Connect: func(ctx context.Context, network, address string, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, error) {
			var conn net.Conn
			var err error
			if connect != nil {
				conn, err = connect(ctx, network, address, dial)
			} else {
				conn, err = dial(ctx, network, address)
			}
			if err == nil {
				f.mu.Lock()
				f.last = conn
				f.mu.Unlock()
			}
			return conn, err
		},
	})
	o.HTTPClient = f.client
	return f
}

// release closes what the session's own transport keeps (the connection of an
// upgrade answered with an error, say).
func (f *faultInjector) release() {
	if f.client != nil {
		f.client.CloseIdleConnections()
	}
}

// counted is called after each message sent or received; it injects the faults
// due at this message: the session is Dropped, and the drop is handled at its next
// read or write.
func (f *faultInjector) counted(s *Session) {
	if len(f.faults) == 0 {
		return
	}
	f.count++
	for _, x := range f.faults {
		if x.AfterMessage != f.count || s.conn == nil || s.Ended() {
			continue
		}
		s.o.Logger.Info().Int("after_message", f.count).Int("close_code", x.CloseCode).Msg("injecting a WebSocket drop")
		f.injected = true
		s.fire(Drop)
		if x.CloseCode == 0 {
			f.code = 1006
			f.mu.Lock()
			if f.last != nil {
				_ = f.last.Close()
			}
			f.mu.Unlock()
		} else {
			f.code = x.CloseCode
			_ = s.conn.Close(x.CloseCode, "fault injected")
		}
	}
}
