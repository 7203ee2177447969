package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/transport"
)

func ExampleEgressRules_CheckURL() {
	rules := transport.PublicOnly()
	for _, raw := range []string{
		"https://hooks.example.com/call",
		"http://public.example@127.0.0.1/",
		"http://[::ffff:169.254.169.254]/latest",
		"ws://hooks.example.com/",
	} {
		u, _ := url.Parse(raw)
		err := rules.CheckURL(u)
		fmt.Println(errors.Is(err, transport.ErrEgressRefused), err)
	}
	// Output:
	// false <nil>
	// true egress refused: 127.0.0.1: URL carries user-info
	// true egress refused: ::ffff:169.254.169.254 (169.254.169.254): cloud metadata address
	// true egress refused: hooks.example.com: scheme "ws" not allowed
}

func ExampleHookClient_Do() {
	var requests atomic.Int32
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"verb":"hangup"}]`)
	}))
	defer app.Close()

	client := transport.NewHookClient(transport.HookClientOptions{
		Rules: transport.CallControlRules(true), // the app runs on loopback here
		// Record the backoff instead of waiting for it.
		Sleep: func(ctx context.Context, d time.Duration) error { fmt.Println("wait", d); return nil },
	})
	defer client.CloseIdleConnections()

	target, _ := fragment.Parse(app.URL + "/call#rc=3&rp=5xx")
	resp, err := client.Do(context.Background(), transport.HookRequest{
		Target:   target,
		Payload:  map[string]any{"call_sid": "abc"},
		Observer: func(a transport.Attempt) { fmt.Println("attempt", a.Number, a.Status, a.Class) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, string(resp.Body))
	// Output:
	// attempt 1 503 5xx
	// wait 500ms
	// attempt 2 503 5xx
	// wait 1s
	// attempt 3 200 success
	// 200 [{"verb":"hangup"}]
}
