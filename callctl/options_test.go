package callctl_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// Every default is the one its field states.
func TestOptionsWithDefaults(t *testing.T) {
	o := callctl.Options{}.WithDefaults()
	if o.Method != "POST" || o.StatusHookMethod != "POST" || o.AckTimeout != 5*time.Second || o.WebhookErrorReturn != 480 ||
		o.IdleLimit != 30*time.Second || o.MaxDuration != 4*time.Hour || o.Clock != (retry.SystemClock{}) {
		t.Fatalf("defaults %+v", o)
	}
	if want := transport.CallControlRules(false); o.EgressRules.AllowLoopback != want.AllowLoopback || len(o.EgressRules.Schemes) != len(want.Schemes) {
		t.Fatalf("egress rules %+v", o.EgressRules)
	}
	set := callctl.Options{AckTimeout: time.Second, Method: "GET"}.WithDefaults()
	if set.AckTimeout != time.Second || set.Method != "GET" {
		t.Fatalf("a set value was replaced: %+v", set)
	}
}

// Validate reports every bad field at once, each wrapping ErrInvalidOptions, and Run
// refuses the same Options before sending anything.
func TestOptionsValidateReportsEveryField(t *testing.T) {
	o := callctl.Options{
		AppURL:             "http://127.0.0.1:1/call", // an HTTP app without Hooks
		AckTimeout:         -time.Second,
		IdleLimit:          -time.Second,
		MaxDuration:        -time.Second,
		WebhookErrorReturn: 200,
		Method:             "PUT",
		StatusHookMethod:   "DELETE",
		Script: callctl.Script{
			Gathers: []callctl.GatherInput{{Digits: "1", Speech: "one"}},
			Faults:  []callctl.Fault{{AfterMessage: 0}},
			Network: callctl.NetworkFaults{Latency: time.Millisecond, Jitter: time.Second, Refuse: 99, Reset: 2},
		},
	}
	err := o.Validate()
	if !errors.Is(err, callctl.ErrInvalidOptions) {
		t.Fatalf("error %v does not wrap ErrInvalidOptions", err)
	}
	for _, want := range []string{"AckTimeout -1s", "IdleLimit -1s", "MaxDuration -1s", "WebhookErrorReturn 200", `method "PUT"`,
		`method "DELETE"`, "gather input 1 has both", "fault 1: after_message", "needs Options.Hooks",
		"jitter 1s exceeds latency 1ms", "refuse + reset is 101"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if r, err := callctl.Run(t.Context(), o); r != nil || !errors.Is(err, callctl.ErrInvalidOptions) {
		t.Fatalf("Run: %v, %v", r, err)
	}
	if err := (callctl.Options{AppURL: "ws://127.0.0.1:1/", Script: callctl.Script{Network: callctl.NetworkFaults{Latency: -1}}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "negative latency") {
		t.Errorf("negative latency: %v", err)
	}
	if err := (callctl.Options{AppURL: "ws://127.0.0.1:1/"}).Validate(); err != nil {
		t.Fatalf("a WebSocket app needs nothing else: %v", err)
	}
	if err := (callctl.Options{AppURL: "ftp://x/"}).Validate(); !errors.Is(err, callctl.ErrInvalidOptions) || !strings.Contains(err.Error(), "application URL") {
		t.Fatalf("bad URL: %v", err)
	}
}

// A caller that parsed the application URL passes it as App: the call runs on it and
// never reads AppURL, which here would not even parse.
func TestOptionsAppIsUsedAsParsed(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"hangup"}]`))
	}))
	t.Cleanup(app.Close)
	target, err := fragment.Parse(app.URL + "/call#rc=0")
	if err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t, "::not a URL")
	o.App = target
	r, err := callctl.Run(t.Context(), o)
	if err != nil || r.Reason != callctl.ReasonAppHangup {
		t.Fatalf("Run: %+v, %v", r, err)
	}
	o.App = fragment.Target{}
	if err := o.Validate(); !errors.Is(err, callctl.ErrInvalidOptions) {
		t.Fatalf("without App, AppURL is parsed: %v", err)
	}
}
