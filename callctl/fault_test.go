package callctl_test

import (
	"slices"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// A mid-call drop (here injected by the node after the 5th message, the ack of the
// gather's verb:hook) is repaired: reconnect, session:reconnect carrying the
// original session:new data, and the call carries on with the verbs it had.
func TestMidCallDropReconnects(t *testing.T) {
	for _, code := range []int{1011, 0} {
		t.Run(itoa(code), func(t *testing.T) {
			app := &exampleapp.WSApp{}
			url := serve(t, app, true)
			o := baseOptions(t, url+"/ws")
			o.Script = callctl.Script{
				Gathers: []callctl.GatherInput{{Digits: "2"}},
				Faults:  []callctl.Fault{{AfterMessage: 6, CloseCode: code}},
			}
			r := run(t, o)
			wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
			wantClose := 1011
			if code == 0 {
				wantClose = 1006
			}
			got := kinds(r, callctl.KindMsgSent, callctl.KindMsgRecv, callctl.KindWSClose, callctl.KindWSReconnect)
			want := []string{"msg.sent session:new", "msg.recv ack", "msg.sent call:status", "msg.sent call:status", "msg.sent verb:hook", "msg.recv ack",
				"ws.close " + itoa(wantClose), "ws.reconnect", "msg.sent session:reconnect", "msg.recv ack",
				"msg.sent call:status", "ws.close 1000"}
			if !slices.Equal(got, want) {
				t.Fatalf("got\n%v\nwant\n%v", got, want)
			}
			if want := []string{"say", "gather", "say", "pause", "say", "hangup"}; !slices.Equal(r.Verbs, want) {
				t.Fatalf("verbs %v", r.Verbs)
			}
			var newData, reconnectData string
			for _, m := range app.Received() {
				switch m.Type {
				case "session:new":
					newData = string(m.Data)
				case "session:reconnect":
					reconnectData = string(m.Data)
				}
			}
			if newData == "" || newData != reconnectData {
				t.Fatalf("session:reconnect data %s, want the session:new data %s", reconnectData, newData)
			}
		})
	}
}
