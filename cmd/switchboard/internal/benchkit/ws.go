package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// WSOptions shape `bench ws`.
type WSOptions struct {
	// Messages is how many request/ack round trips each side makes a round.
	Messages int
	// Size is the request's size in bytes.
	Size   int
	Rounds int
}

// WS measures a request and its ack (one message each way) over a wsclient.Conn
// (the call's connection: payload limit, close handling) against the same over a
// bare coder/websocket connection, both to one loopback echo server.
func WS(ctx context.Context, o WSOptions) ([]Result, error) {
	if o.Messages < 1 || o.Size < 1 || o.Size > wsclient.DefaultMaxPayload {
		return nil, fmt.Errorf("benchkit: messages must be at least 1 and size in [1, %d]", wsclient.DefaultMaxPayload)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsclient.Subprotocol}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(wsclient.DefaultMaxPayload)
		for {
			typ, m, err := c.Read(r.Context())
			if err != nil || c.Write(r.Context(), typ, m) != nil {
				return
			}
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "ws://" + ln.Addr().String() + "/echo"
	hc := transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{})
	defer hc.CloseIdleConnections()

	target, err := fragment.Parse(url + "#rc=0")
	if err != nil {
		return nil, err
	}
	conn, err := wsclient.Dial(ctx, target, wsclient.Options{HTTPClient: hc, HandshakeTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer conn.Close(1000, "")
	bare, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{wsclient.Subprotocol}})
	if err != nil {
		return nil, err
	}
	defer bare.CloseNow()
	bare.SetReadLimit(wsclient.DefaultMaxPayload)

	msg := bytes.Repeat([]byte("x"), o.Size)
	ours := func() error {
		if err := conn.Write(ctx, msg); err != nil {
			return err
		}
		_, err := conn.Read(ctx)
		return err
	}
	baseline := func() error {
		if err := bare.Write(ctx, websocket.MessageText, msg); err != nil {
			return err
		}
		_, _, err := bare.Read(ctx)
		return err
	}
	m := Measure{Name: "websocket request/ack", Unit: "µs", Better: Lower}
	return timedPair(ctx, o.Rounds, m, o.Messages, ours, baseline)
}
