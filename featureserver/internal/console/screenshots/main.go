// Command screenshots regenerates the console's screenshots in docs/images (the
// README and docs/rest-api.md show them): it runs a node on loopback with a demo account, an endpoint
// whose receiver fails twice then succeeds, one that keeps failing, and a
// WebSocket call that drops and reconnects, then captures the console's pages in
// headless Chromium at 1280×800.
//
//	go run ./featureserver/internal/console/screenshots [-out docs/images]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/featureserver/internal/console/consoletest"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "images"), "where the PNGs go")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	dir, err := os.MkdirTemp("", "console-screenshots")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	node, err := consoletest.Start(dir, zerolog.Nop())
	if err != nil {
		return err
	}
	defer node.Stop()
	acct, err := node.CreateAccount("Acme Telephony")
	if err != nil {
		return err
	}
	flaky, err := consoletest.NewReceiver(func(n int) (int, string) {
		if n%3 < 2 {
			return 503, `{"error":"upstream busy"}`
		}
		return 200, `{"received":true}`
	})
	if err != nil {
		return err
	}
	defer flaky.Close()
	down, err := consoletest.NewReceiver(func(int) (int, string) { return 500, "<h1>Internal Server Error</h1>" })
	if err != nil {
		return err
	}
	defer down.Close()
	type ep struct{ ID string }
	var a, b ep
	policy := map[string]any{"scheduleSeconds": []int{0, 0}, "allowHttp": true}
	if err := node.Do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": flaky.URL, "events": []string{"invoice.paid", "invoice.failed"}, "policy": policy}, &a); err != nil {
		return err
	}
	if err := node.Do("POST", "/api/v1/webhooks", acct.APIToken, map[string]any{"url": down.URL, "policy": policy}, &b); err != nil {
		return err
	}
	for i := range 6 {
		typ := "invoice.paid"
		if i%2 == 1 {
			typ = "invoice.failed"
		}
		if err := node.Do("POST", "/api/v1/events", acct.APIToken, map[string]any{"type": typ, "data": map[string]any{"invoice": 1000 + i}}, nil); err != nil {
			return err
		}
	}
	app := httptest.NewServer(&exampleapp.WSApp{})
	defer app.Close()
	var call struct {
		CallSid string `json:"call_sid"`
	}
	if err := node.Do("POST", "/v1/Accounts/"+acct.AccountSid+"/Calls", acct.APIToken, map[string]any{
		"from": "+15550100", "to": "+15550199",
		"call_hook": map[string]any{"url": "ws" + strings.TrimPrefix(app.URL, "http") + "/ws"},
		// jambonz's API requires the speech settings beside an inline call_hook.
		"speech_synthesis_vendor": "google", "speech_synthesis_language": "en-US", "speech_synthesis_voice": "en-US-Standard-C",
		"speech_recognizer_vendor": "google", "speech_recognizer_language": "en-US",
		"scenario": map[string]any{"caller": map[string]any{"gathers": []any{map[string]any{"digits": "1"}}},
			"faults": []any{map[string]any{"after_message": 2, "close_code": 1011}}},
	}, &call); err != nil {
		return err
	}
	err = consoletest.Poll(30*time.Second, "the demo's deliveries and call", func() (bool, error) {
		var v struct{ Active bool }
		if err := node.Do("GET", "/v1/Accounts/"+acct.AccountSid+"/Calls/"+call.CallSid, acct.APIToken, nil, &v); err != nil {
			return false, err
		}
		var ds struct {
			Data []struct{ Status string } `json:"data"`
		}
		if err := node.Do("GET", "/api/v1/webhooks/"+b.ID+"/deliveries?status=PENDING", acct.APIToken, nil, &ds); err != nil {
			return false, err
		}
		return !v.Active && len(ds.Data) == 0, nil
	})
	if err != nil {
		return err
	}
	// The delivery to show: the one of the flaky endpoint with the most attempts
	// that got through in the end.
	var ds struct {
		Data []struct {
			ID       string
			Status   string
			Attempts int
		}
	}
	if err := node.Do("GET", "/api/v1/webhooks/"+a.ID+"/deliveries", acct.APIToken, nil, &ds); err != nil {
		return err
	}
	flakyDelivery, most := "", -1
	for _, d := range ds.Data {
		if n := d.Attempts + map[bool]int{true: 100}[d.Status == "SUCCEEDED"]; n > most {
			flakyDelivery, most = d.ID, n
		}
	}
	browser, stop, err := consoletest.NewBrowser(1280, 800)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(node.Base+"/console/signin"),
		chromedp.SendKeys(chromedp.CSS("#token"), acct.APIToken)); err != nil {
		return err
	}
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#signin"))); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, shot := range []struct{ name, path string }{
		{"console-glance.png", "/console/"},
		{"console-endpoint.png", "/console/endpoints/" + a.ID},
		{"console-delivery.png", "/console/endpoints/" + a.ID + "/deliveries/" + flakyDelivery},
		{"console-call.png", "/console/calls/" + call.CallSid},
	} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(node.Base+shot.path)); err != nil {
			return fmt.Errorf("%s: %w", shot.path, err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return fmt.Errorf("%s: %w", shot.path, err)
		}
		if err := os.WriteFile(filepath.Join(out, shot.name), png, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, shot.name))
	}
	return nil
}
