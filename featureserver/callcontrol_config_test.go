package featureserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport"
)

// The node and `simulate` build their calls' options in one place, from the
// JAMBONES_* settings: a call through them carries every one.
func TestCallNetworkOptions(t *testing.T) {
	t.Parallel()
	cfg, err := LoadCallControlConfig(envOf(map[string]string{
		"JAMBONES_HTTP_USER_AGENT_HEADER": "acme/1", "JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT": "700",
		"JAMBONES_WEBHOOK_ERROR_RETURN": "503", "JAMBONES_WS_MAX_PAYLOAD": "4096",
		"JAMBONES_WS_PING_INTERVAL_MS": "900", "JAMBONES_WS_HANDSHAKE_TIMEOUT_MS": "800",
	}))
	if err != nil {
		t.Fatal(err)
	}
	n := NewCallNetwork(cfg, transport.CallControlRules(true), zerolog.Nop())
	t.Cleanup(n.CloseIdleConnections)
	o := n.CallOptions("ws://127.0.0.1:1/app")
	ws := o.WebSocket
	if o.AppURL != "ws://127.0.0.1:1/app" || o.AckTimeout != 700*time.Millisecond || o.WebhookErrorReturn != 503 ||
		ws.HandshakeTimeout != 800*time.Millisecond || ws.MaxPayload != 4096 || ws.PingInterval != 900*time.Millisecond ||
		ws.UserAgent != "acme/1" || ws.HTTPClient == nil || !o.EgressRules.AllowLoopback {
		t.Fatalf("options %+v", o)
	}

	agents := make(chan string, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents <- r.UserAgent()
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(app.Close)
	r, err := callctl.Run(t.Context(), n.CallOptions(app.URL+"/call"))
	if err != nil {
		t.Fatal(err)
	}
	if ua := <-agents; ua != "acme/1" || r.Reason != callctl.ReasonCallHookFailed || r.SIPStatus != 503 {
		t.Fatalf("hook User-Agent %q, call ended %s with SIP %d", ua, r.Reason, r.SIPStatus)
	}
}
