package callctl_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
	"github.com/switchboard-voice/switchboard/transport"
)

// Run one simulated call against an HTTP webhook app on loopback: the caller
// presses 2 at the gather.
func ExampleRun() {
	app := httptest.NewServer(&exampleapp.HTTPApp{})
	defer app.Close()
	// One hook client serves every call; each call's retry delays pass on its
	// own simulated clock.
	hooks := transport.NewHookClient(transport.HookClientOptions{
		Rules: transport.CallControlRules(true), // the app is on loopback
	})
	defer hooks.CloseIdleConnections()

	r, err := callctl.Run(context.Background(), callctl.Options{
		AppURL: app.URL + "/call",
		Hooks:  hooks,
		Script: callctl.Script{Gathers: []callctl.GatherInput{{Digits: "2"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Verbs)
	fmt.Println(r.Hooks)
	fmt.Println(r.Status, r.Reason, r.SIPStatus)
	// Output:
	// [say gather say pause say hangup]
	// [/call /gather]
	// completed hangup-verb 200
}
