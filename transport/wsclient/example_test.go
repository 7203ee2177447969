package wsclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
	"github.com/switchboard-voice/switchboard/transport/wsclient"
)

// A call's WebSocket: dial the application URL (its fragment sets the retry policy
// and is never sent), exchange text messages, and tell a graceful end (1000) from a
// drop that calls for a reconnect episode.
func Example() {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsclient.Subprotocol}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, msg, _ := c.Read(r.Context())
		c.Write(r.Context(), websocket.MessageText, []byte(`{"type":"ack","msgid":"`+string(msg)+`"}`))
		c.Close(websocket.StatusNormalClosure, "call handled")
	}))
	defer app.Close()

	target, _ := fragment.Parse("ws" + strings.TrimPrefix(app.URL, "http") + "/call#rc=2&rp=ct")
	opts := wsclient.Options{
		// Egress rules for call control; loopback allowed for this local app.
		HTTPClient: transport.NewHTTPClient(transport.CallControlRules(true), transport.ClientOptions{}),
	}
	ctx := context.Background()
	conn, err := wsclient.Dial(ctx, target, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close(1000, "call ended")
	fmt.Println("subprotocol:", conn.Subprotocol())

	conn.Write(ctx, []byte("42"))
	msg, _ := conn.Read(ctx)
	fmt.Println("received:", string(msg))

	_, err = conn.Read(ctx)
	switch {
	case errors.Is(err, wsclient.ErrNormalClosure):
		fmt.Println("app ended the session, status", wsclient.CloseStatus(err))
	case errors.Is(err, wsclient.ErrDropped):
		fmt.Println("dropped: start a reconnect episode with a Reconnector")
	}
	// Output:
	// subprotocol: ws.jambonz.org
	// received: {"type":"ack","msgid":"42"}
	// app ended the session, status 1000
}
