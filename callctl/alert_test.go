package callctl_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// A hook that fails raises webhook-connection-failure, whether it cannot reach the
// app or the app answers with an error status: jambonz's HTTP requestor raises
// webhook-failure only for a StatusError, which its undici client never throws
// (lib/utils/http-requestor.js, lib/utils/error.js HTTPResponseError). Either way the
// alert names the failed URL.
func TestHookAlertTypes(t *testing.T) {
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/call":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`[{"verb":"say","text":"hi"}]`))
		case "/status":
			w.WriteHeader(http.StatusInternalServerError)
		}
	}), false)
	tests := []struct {
		name, appURL, statusURL string
		alert                   callctl.AlertType
		url                     string
	}{
		{"refused call hook", "http://127.0.0.1:1/call", "", callctl.AlertWebhookConnectionFailure, "http://127.0.0.1:1/call"},
		{"status hook answering 500", app + "/call", app + "/status", callctl.AlertWebhookConnectionFailure, app + "/status"},
		{"status hook refusing", app + "/call", "http://127.0.0.1:1/status", callctl.AlertWebhookConnectionFailure, "http://127.0.0.1:1/status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := baseOptions(t, tt.appURL)
			o.StatusHookURL = tt.statusURL
			r := run(t, o)
			if len(r.Alerts) == 0 {
				t.Fatal("no alert")
			}
			a := r.Alerts[0]
			if a.Type != tt.alert || a.URL != tt.url {
				t.Errorf("alert %s at %q, want %s at %q (%s)", a.Type, a.URL, tt.alert, tt.url, a.Detail)
			}
		})
	}
}

// The status hook uses its own method and credentials, never the call hook's; a GET
// carries nothing of the call (jambonz's http-requestor.js sends no payload on a GET).
func TestStatusHookOwnMethodAndCredentials(t *testing.T) {
	type seen struct {
		method string
		user   string
		query  string
	}
	got := make(chan seen, 16)
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/status" {
			u, _, _ := r.BasicAuth()
			got <- seen{r.Method, u, r.URL.Query().Get("call_status")}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"say","text":"hi"},{"verb":"hangup"}]`))
	}), false)
	o := baseOptions(t, app+"/call")
	o.Username, o.Password = "call-user", "call-secret"
	o.StatusHookURL, o.StatusHookMethod = app+"/status", "GET"
	run(t, o)
	close(got)
	n := 0
	for s := range got {
		n++
		if s.method != "GET" || s.user != "" || s.query != "" {
			t.Errorf("status hook request %+v: want GET with no fields in the query and no credentials", s)
		}
	}
	if n == 0 {
		t.Fatal("no status notification")
	}
	o = baseOptions(t, app+"/call")
	o.StatusHookURL, o.StatusHookMethod = app+"/status", "PUT"
	if _, err := callctl.Run(t.Context(), o); err == nil {
		t.Error("a PUT status hook must be refused")
	}
}

// A caller who hangs up before the call was answered cancels it: no-answer, 487.
func TestCallerHangupBeforeAnswer(t *testing.T) {
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"verb":"pause","length":60},{"verb":"say","text":"too late"}]`))
	}), false)
	o := baseOptions(t, app)
	o.Script.HangupAfter = 2 * time.Second
	r := run(t, o)
	wantEnd(t, r, callctl.StatusNoAnswer, callctl.ReasonCallerHangup, 487)
}

// A dial that is not answered rings for the dial's whole timeout.
func TestDialNoAnswerRingsTheTimeout(t *testing.T) {
	app := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/a" {
			_, _ = w.Write([]byte(`[{"verb":"hangup"}]`))
			return
		}
		_, _ = w.Write([]byte(`[{"verb":"dial","target":[{"type":"phone","number":"+15550100"}],"timeout":20,"actionHook":"/a"}]`))
	}), false)
	o := baseOptions(t, app)
	o.Script.Dials = []callctl.DialOutcome{{Status: callctl.StatusNoAnswer}}
	r := run(t, o)
	var start, end time.Duration
	for _, e := range r.Timeline {
		if e.Verb == "dial" && e.Kind == callctl.KindVerbStart {
			start = e.At
		}
		if e.Verb == "dial" && e.Kind == callctl.KindVerbEnd {
			end = e.At
		}
	}
	if rang := end - start; rang < 20*time.Second || rang > 25*time.Second {
		t.Errorf("the unanswered dial lasted %v, want its 20 s timeout", rang)
	}
}

// A destination the egress rules refuse gets one short alert: the URL once, what the
// rules refused and why, and how to allow it (Options.EgressHint); HTTP hooks and
// WebSocket connections alike.
func TestEgressRefusalAlertIsShort(t *testing.T) {
	for _, url := range []string{"http://169.254.1.1/call", "ws://169.254.1.1/ws"} {
		o := baseOptions(t, url)
		o.EgressHint = "allow it with SWITCHBOARD_EGRESS_ALLOW"
		r := run(t, o)
		if len(r.Alerts) != 1 {
			t.Fatalf("%s: alerts %v", url, r.Alerts)
		}
		d := r.Alerts[0].Detail
		if strings.Count(d, "169.254.1.1") != 2 || strings.Count(d, url) != 1 || !strings.Contains(d, "link-local") ||
			!strings.HasSuffix(d, "(allow it with SWITCHBOARD_EGRESS_ALLOW)") || len(d) > 120 {
			t.Errorf("%s: alert %q: want the URL once, the reason and the hint, on a short line", url, d)
		}
	}
}
