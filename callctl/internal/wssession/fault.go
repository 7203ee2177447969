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
// (Options.Faults). For a drop without a close frame it needs the TCP connection, so
// it dials the session's WebSockets through its own transport, with the egress rules
// given.
type faultInjector struct {
	faults []Fault
	count  int

	mu   sync.Mutex
	last net.Conn // the latest TCP connection dialed for this session

	injected bool // a drop was injected: the next ws.close reports code
	code     int
}

// errInjectedDrop is the cause of a drop the node injected itself.
var errInjectedDrop = errors.New("callctl: drop injected by the scenario")

func newFaultInjector(faults []Fault, o *wsclient.Options, rules transport.EgressRules) *faultInjector {
	f := &faultInjector{faults: faults}
	if len(faults) == 0 {
		return f
	}
	abrupt := false
	for _, x := range faults {
		abrupt = abrupt || x.CloseCode == 0
	}
	if !abrupt {
		return f
	}
	timeout := o.HandshakeTimeout
	if timeout <= 0 {
		timeout = wsclient.DefaultHandshakeTimeout
	}
	dialer := transport.NewDialer(rules, timeout)
	o.HTTPClient = &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				f.mu.Lock()
				f.last = conn
				f.mu.Unlock()
			}
			return conn, err
		},
		DisableKeepAlives: true,
	}}
	return f
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
