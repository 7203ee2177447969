package integration

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/internal/testkit"
)

// docs/call-control.md §5, §9: on a node, a scenario's faults dial through the node's
// own egress rules, SWITCHBOARD_EGRESS_ALLOW included (startServe allows 127.0.0.0/8):
// the first connection attempt is refused by the network fault, the second connects,
// the drop without a close frame is repaired, and the call completes.
func TestServeScenarioFaultsUseTheNodeEgressRules(t *testing.T) {
	t.Parallel()
	app := httptest.NewServer(&exampleapp.WSApp{})
	t.Cleanup(func() {
		app.CloseClientConnections()
		app.Close()
	})
	p := startServe(t, filepath.Join(t.TempDir(), "node.db"))
	a := p.account()
	c := p.waitCall(a, p.startCall(a, testkit.WithSpeech(map[string]any{
		"call_hook": map[string]any{"url": "ws" + strings.TrimPrefix(app.URL, "http") + "/ws#rc=3"}, "from": "+1555", "to": "+1666",
		"scenario": map[string]any{
			"caller":  map[string]any{"gathers": []any{map[string]any{"digits": "1"}}},
			"faults":  []any{map[string]any{"after_message": 5}},
			"network": map[string]any{"refuse": 1},
		},
	})))
	k := c.kinds()
	if c.CallStatus != "completed" || c.Reason != "hangup-verb" || !strings.Contains(k, "fault hook.attempt hook.retry hook.attempt ws.open") ||
		!strings.Contains(k, "ws.close") || !strings.Contains(k, "ws.reconnect") {
		t.Errorf("call %s (%s):\n%s", c.CallStatus, c.Reason, k)
	}
}
