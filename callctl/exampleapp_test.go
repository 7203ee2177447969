package callctl_test

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

func TestHTTPAppIVR(t *testing.T) {
	app := &exampleapp.HTTPApp{Secret: "s3cret"}
	url := serve(t, app, false)
	o := baseOptions(t, url+"/call")
	o.StatusHookURL = "/status"
	o.Secret = "s3cret"
	o.Script = callctl.Script{Gathers: []callctl.GatherInput{{Digits: "1"}}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	if want := []string{"say", "gather", "say", "pause", "say", "hangup"}; !slices.Equal(r.Verbs, want) {
		t.Fatalf("verbs %v, want %v", r.Verbs, want)
	}
	var paths []string
	for _, rq := range app.Requests() {
		paths = append(paths, rq.Path)
	}
	// trying, in-progress, completed (jambonz notifies trying once the call has its verbs).
	if want := []string{"/call", "/status", "/status", "/gather", "/status"}; !slices.Equal(paths, want) {
		t.Fatalf("requests %v, want %v", paths, want)
	}
	g := app.Requests()[3].Payload
	if g["reason"] != "dtmfDetected" || g["digits"] != "1" || g["call_sid"] != r.CallSid {
		t.Fatalf("gather payload %v", g)
	}
	if last := app.Requests()[4].Payload; last["call_status"] != "completed" || last["duration"] == nil {
		t.Fatalf("final status payload %v", last)
	}
	// say(23 chars) + gather prompt + 2 s input + say + pause 1 s + say: simulated,
	// so many seconds pass in the timeline while the test takes milliseconds.
	if r.Duration < 5*time.Second {
		t.Fatalf("simulated duration %v, want several seconds", r.Duration)
	}
}

func TestWSAppIVR(t *testing.T) {
	app := &exampleapp.WSApp{}
	url := serve(t, app, true)
	o := baseOptions(t, url+"/ws")
	o.Script = callctl.Script{Gathers: []callctl.GatherInput{{Speech: "sales please"}}}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	got := kinds(r, callctl.KindMsgSent, callctl.KindMsgRecv, callctl.KindWSOpen, callctl.KindWSClose)
	want := []string{"ws.open", "msg.sent session:new", "msg.recv ack", "msg.sent call:status", "msg.sent call:status",
		"msg.sent verb:hook", "msg.recv ack", "msg.sent call:status", "ws.close 1000"}
	if !slices.Equal(got, want) {
		t.Fatalf("messages\n%v\nwant\n%v", got, want)
	}
}

// Live call control moving a call within the example WebSocket app (a waiting call)
// is acked with its welcome: the call starts over on the same session.
func TestWSAppAcksSessionRedirect(t *testing.T) {
	app := &exampleapp.WSApp{Waiting: true}
	url := serve(t, app, true)
	o := baseOptions(t, url+"/ws")
	o.IdleLimit = 20 * time.Second
	o.Script = callctl.Script{Gathers: []callctl.GatherInput{{Speech: "sales please"}}}
	ctl := make(chan callctl.Control, 1)
	o.Control = ctl
	sent := false
	o.OnEvent = func(e callctl.Event) {
		if e.Kind == callctl.KindMsgRecv && !sent { // session:new's ack
			sent = true
			ctl <- callctl.Control{Redirect: "/ws"}
		}
	}
	r := run(t, o)
	wantEnd(t, r, callctl.StatusCompleted, callctl.ReasonAppHangup, 200)
	got := kinds(r, callctl.KindMsgSent, callctl.KindWSOpen)
	want := []string{"ws.open", "msg.sent session:new", "msg.sent call:status", "msg.sent session:redirect", "msg.sent call:status",
		"msg.sent verb:hook", "msg.sent call:status"}
	if !slices.Equal(got, want) {
		t.Fatalf("messages\n%v\nwant\n%v", got, want)
	}
}

// The example app refuses unsigned hooks when it has a secret: the call is
// rejected with 480 and a webhook-connection-failure alert.
func TestHTTPAppRefusesUnsignedHooks(t *testing.T) {
	url := serve(t, &exampleapp.HTTPApp{Secret: "s3cret"}, false)
	r := run(t, baseOptions(t, url+"/call"))
	wantEnd(t, r, callctl.StatusFailed, callctl.ReasonCallHookFailed, 480)
	if r.Timeline[2].HTTPStatus != 401 {
		t.Fatalf("attempt %v", r.Timeline[2])
	}
}
