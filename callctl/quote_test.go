package callctl_test

import (
	"encoding/json"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/transport"
)

// Options.QuoteAnswersFrom judges the destinations the call connected to: once it
// refuses one, nothing the application sent is quoted in the call's alerts and
// compat warnings (an invalid WebSocket message, a redirect command's data, an ack
// that is not verbs, a command jambonz does not know) nor in its messages' data,
// which say what came and NotQuotedHint instead; the call runs as it would have.
// Without it, every one of them quotes.
func TestQuoteAnswersFrom(t *testing.T) {
	const secret = "hunter2"
	for _, quote := range []bool{true, false} {
		t.Run(map[bool]string{true: "quoted", false: "not quoted"}[quote], func(t *testing.T) {
			_, url := newWS(t, func(s *wsSession) {
				m := s.next("session:new")
				s.send(map[string]any{"type": secret})
				s.next("jambonz:error")
				s.send(map[string]any{"type": "command", "command": "redirect", "data": map[string]any{secret: true}})
				s.send(map[string]any{"type": "command", "command": secret, "data": map[string]any{}})
				s.ack(m, say("fine"), map[string]any{"verb": "gather", "actionHook": "/g", "input": []string{"digits"}})
				s.ack(s.next("verb:hook"), map[string]any{"db_password": secret})
				s.drain()
			})
			o := baseOptions(t, url)
			var mu sync.Mutex
			var asked []transport.Peer
			o.QuoteAnswersFrom = func(p transport.Peer) bool {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p)
				return quote
			}
			o.NotQuotedHint = "not quoted here"
			r := run(t, o)
			timeline, err := json.Marshal(r.Timeline)
			if err != nil {
				t.Fatal(err)
			}
			text := string(timeline)
			if got := strings.Count(text, secret); quote && got < 3 || !quote && got > 0 {
				t.Fatalf("the secret appears %d times (quoting %v):\n%s", got, quote, text)
			}
			if !quote && strings.Count(text, "not quoted here") < 3 {
				t.Fatalf("the timeline does not say what it did not quote:\n%s", text)
			}
			mu.Lock()
			defer mu.Unlock()
			loopback := netip.MustParseAddr("127.0.0.1")
			if len(asked) == 0 || asked[0].Addr != loopback || asked[0].Host != "127.0.0.1" {
				t.Fatalf("asked about %v, want the app's address", asked)
			}
			if !hasAlert(r, callctl.AlertInvalidAppPayload) {
				t.Fatal("no invalid-app-payload alert")
			}
		})
	}
}
