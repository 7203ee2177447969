package callctl_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/switchboard-voice/switchboard/callctl"
)

// idleWSApp acks session:new with one say and then waits: the call waits for a
// command, which is when a node's live call control matters.
func idleWSApp(t *testing.T) string {
	t.Helper()
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"ws.jambonz.org"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m struct{ Type, Msgid string }
			if json.Unmarshal(data, &m) == nil && m.Type == "session:new" {
				ack := fmt.Sprintf(`{"type":"ack","msgid":%q,"data":[{"verb":"say","text":"hello"}]}`, m.Msgid)
				if c.Write(r.Context(), websocket.MessageText, []byte(ack)) != nil {
					return
				}
			}
		}
	}), true)
}

// controlled runs a call against an idle WebSocket app and sends ctl once its first
// verb ended.
func controlled(t *testing.T, o callctl.Options, ctl ...callctl.Control) *callctl.Result {
	t.Helper()
	ch := make(chan callctl.Control, len(ctl))
	o.Control = ch
	sent := false
	o.OnEvent = func(e callctl.Event) {
		if e.Kind == callctl.KindVerbEnd && !sent {
			sent = true
			for _, c := range ctl {
				ch <- c
			}
		}
	}
	return run(t, o)
}

func TestControlRedirectReplacesVerbs(t *testing.T) {
	t.Parallel()
	redirect := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"say","text":"redirected"},{"verb":"hangup"}]`)
	}), false)
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	r := controlled(t, o, callctl.Control{Redirect: redirect + "/new-app"})
	if !slices.Equal(r.Verbs, []string{"say", "say", "hangup"}) {
		t.Errorf("verbs %v, want say, say, hangup", r.Verbs)
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if !slices.Contains(r.Hooks, "/new-app") {
		t.Errorf("hooks %v lack the redirect", r.Hooks)
	}
}

func TestControlHangup(t *testing.T) {
	t.Parallel()
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	mute := true
	r := controlled(t, o, callctl.Control{Mute: &mute}, callctl.Control{Hangup: true})
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAPIHangup, 200)
}

func TestControlRedirectFailureAlertsAndContinues(t *testing.T) {
	t.Parallel()
	o := baseOptions(t, idleWSApp(t))
	o.IdleLimit = 20 * time.Second
	r := controlled(t, o, callctl.Control{Redirect: "wss://example.invalid/ws"}, callctl.Control{Hangup: true})
	if !hasAlert(r, callctl.AlertWebhookFailure) {
		t.Error("a redirect that cannot run must raise webhook-failure")
	}
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAPIHangup, 200)
}

func TestControlValidate(t *testing.T) {
	t.Parallel()
	yes := true
	for _, bad := range []callctl.Control{{}, {Hangup: true, Mute: &yes}, {Redirect: "http://x/", Hangup: true}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (callctl.Control{Hangup: true}).Validate(); err != nil {
		t.Error(err)
	}
}
