package callctl

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// FuzzParseRedirect feeds arbitrary WebSocket messages through DecodeAppMessage and,
// for the redirect commands it accepts, parseRedirect (the command's data). Neither
// may panic; every refusal wraps ErrInvalidMessage; the same input gives the same
// result; a redirect gives one of verbs, call hooks (call_hook, child_call_hook),
// parent verbs, an error or nothing, and a call hook given as a string is taken exactly as written.
func FuzzParseRedirect(f *testing.F) {
	testkit.AddSeeds[[]byte](f,
		`{"type":"command","command":"redirect","data":[{"verb":"say","text":"x"}]}`,
		`{"type":"command","command":"redirect","queueCommand":true,"data":[]}`,
		`{"type":"command","command":"redirect","data":{"call_hook":"/next"}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":"https://app.example.com/x#rc=1"}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":{"url":"/y","method":"GET"}}}`,
		`{"type":"command","command":"redirect","data":{"parent_call":[{"hangup":{}}],"child_call":[]}}`,
		`{"type":"command","command":"redirect","data":{"child_call_hook":"/child"}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":"/p","child_call_hook":{"url":"/c"}}}`,
		`{"type":"command","command":"redirect","data":{"url":"/z"}}`,
		`{"type":"command","command":"redirect","data":"/s"}`,
		`{"type":"command","command":"redirect","data":{"call_hook":""}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":7}}`,
		`{"type":"command","command":"call:status","data":"completed"}`,
		`{"type":"ack","msgid":"1","data":[]}`,
	)
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := wssession.DecodeAppMessage(raw)
		if err != nil {
			if !errors.Is(err, wssession.ErrInvalidMessage) {
				t.Fatalf("DecodeAppMessage error %v does not wrap ErrInvalidMessage", err)
			}
			return
		}
		if m.Type != wssession.MsgCommand || m.Command != "redirect" {
			return
		}
		r, again := parseRedirect(m.Data), parseRedirect(m.Data)
		if !reflect.DeepEqual(r, again) {
			t.Fatalf("parseRedirect is not deterministic: %#v, %#v", r, again)
		}
		given := 0
		for _, set := range []bool{r.verbs != nil, r.hook != "" || r.childHook != "", r.parent != nil, r.ignored} {
			if set {
				given++
			}
		}
		if given > 1 || (given == 0) == (r.err == nil) && m.Data[0] != '[' {
			t.Fatalf("redirect %s read as %#v", m.Data, r)
		}
		var obj struct {
			CallHook string `json:"call_hook"`
		}
		if json.Unmarshal(m.Data, &obj) == nil && obj.CallHook != "" && r.hook != obj.CallHook {
			t.Fatalf("call_hook %q read as %q", obj.CallHook, r.hook)
		}
	})
}

// FuzzResponseAnswer feeds arbitrary answers (status, Content-Type, body) to the
// hook response handling. It may not panic; an answer is exactly one of verbs (a
// JSON array whose verbs validate), an error (wrapping verbs.ErrInvalidPayload),
// empty (a 204, blanks) or not an array (anything else, described); acceptVerbs
// refuses only bodies typed JSON that do not parse, which are errors.
func FuzzResponseAnswer(f *testing.F) {
	for _, s := range []struct {
		status int
		ct     string
		body   string
	}{
		{200, "application/json", `[{"verb":"say","text":"hi"}]`},
		{200, "application/json; charset=utf-8", `[]`},
		{202, "application/vnd.jambonz+json", `[{"hangup":{}}]`},
		{200, "text/html", "<html></html>"},
		{200, "text/plain", `[{"verb":"say","text":"hi"}]`},
		{200, "", "ok"},
		{200, "application/json", "{}"},
		{200, "application/json", "[{"},
		{204, "text/html", "x"},
		{200, "bogus;;", " "},
		{200, "text/plain", "\xff\xfe"},
	} {
		f.Add(s.status, s.ct, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, ct string, body []byte) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		ans := responseAnswer(&transport.HookResponse{Status: status, Header: h, Body: body})
		kinds := 0
		for _, set := range []bool{ans.isArray(), ans.err != nil, ans.empty, ans.notArray != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			t.Fatalf("answer %#v is not exactly one kind", ans)
		}
		if ans.err != nil && !errors.Is(ans.err, verbs.ErrInvalidPayload) {
			t.Fatalf("error %v does not wrap ErrInvalidPayload", ans.err)
		}
		if aerr := acceptVerbs(status, h, body); aerr != nil && ans.err == nil {
			t.Fatalf("acceptVerbs refused %q (%v) but the answer is %#v", body, aerr, ans)
		}
		if (status == 204 || strings.TrimSpace(string(body)) == "") != ans.empty {
			t.Fatalf("answer %#v to a %d with body %q", ans, status, body)
		}
		if ans.isArray() {
			if _, derr := verbs.Decode(body); derr != nil {
				t.Fatalf("accepted body %q that does not decode: %v", body, derr)
			}
		}
	})
}

// jambonz's digit collection (lib/tasks/gather.js _onDtmf, _startTimer), key by key:
// keys from 2 s after the prompt, one every 250 ms.
func TestCollectDigits(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name   string
		g      verbs.Gather
		keys   string
		digits bool
		buffer string
		at     time.Duration
	}{
		{"finishOnKey ends, not kept", verbs.Gather{FinishOnKey: "#"}, "42#", true, "42", 2500 * time.Millisecond},
		{"finishOnKey first", verbs.Gather{FinishOnKey: "#"}, "#9", true, "", 2 * time.Second},
		{"numDigits", verbs.Gather{NumDigits: 3}, "12345", true, "123", 2500 * time.Millisecond},
		{"maxDigits", verbs.Gather{MaxDigits: 2}, "12345", true, "12", 2250 * time.Millisecond},
		{"no rule: the default 15 s timeout, no digits", verbs.Gather{}, "12", false, "12", 15 * time.Second},
		{"minDigits at the timeout", verbs.Gather{MinDigits: 2, Timeout: f(5)}, "12", true, "12", 5 * time.Second},
		{"under minDigits at the timeout", verbs.Gather{MinDigits: 3, Timeout: f(5)}, "12", false, "12", 5 * time.Second},
		{"interDigitTimeout after minDigits", verbs.Gather{MinDigits: 1, InterDigitTimeout: 1}, "123", true, "123", 3500 * time.Millisecond},
		{"interDigitTimeout without minDigits never starts", verbs.Gather{InterDigitTimeout: 1, Timeout: f(4)}, "1", false, "1", 4 * time.Second},
		{"keys after the timeout are not heard", verbs.Gather{NumDigits: 2, Timeout: f(2.1)}, "12", false, "1", 2100 * time.Millisecond},
		{"timeout 0 waits forever", verbs.Gather{Timeout: f(0)}, "", false, "", forever},
		{"timeout 0 after keys", verbs.Gather{Timeout: f(0)}, "12", false, "12", forever},
		{"timeout beyond setTimeout fires after 1 ms", verbs.Gather{Timeout: f(3e6)}, "12", false, "", time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := collectDigits(&tc.g, tc.keys, 2*time.Second, 250*time.Millisecond)
			if out.digits != tc.digits || out.buffer != tc.buffer || out.at != tc.at {
				t.Errorf("got %+v, want digits %v buffer %q at %v", out, tc.digits, tc.buffer, tc.at)
			}
		})
	}
	// A scenario's huge key interval saturates instead of wrapping into the past.
	if out := collectDigits(&verbs.Gather{NumDigits: 3}, "123", 2*time.Second, forever/2); out.digits || out.at != 15*time.Second {
		t.Errorf("huge key interval: got %+v, want a timeout at 15s", out)
	}
}

// A redirect command's fields are tested as JavaScript tests them (if
// (opts.call_hook) ...): 0.0 and -0 are as falsy as 0, so such a call_hook is no
// call hook, and the data is ignored rather than refused.
func TestParseRedirectTruthiness(t *testing.T) {
	for _, data := range []string{`{"call_hook":0.0}`, `{"call_hook":-0}`, `{"parent_call":0e3}`, `{"child_call_hook":""}`} {
		if r := parseRedirect(json.RawMessage(data)); !r.ignored || r.err != nil {
			t.Errorf("parseRedirect(%s) = %+v, want ignored", data, r)
		}
	}
}

// A hook is an absolute http(s) URL as ws-requestor.js tests it: an absolute URL
// by its prefix (base-requestor.js _isAbsoluteUrl), whose scheme is http(s); "http:x"
// has no // and is not one.
func TestIsAbsoluteHTTP(t *testing.T) {
	for raw, want := range map[string]bool{"https://a/x": true, "HTTP://a/x": true, "http:x": false, "ws://a/x": false, "/x": false, "httpx://a": false} {
		if got := isAbsoluteHTTP(raw); got != want {
			t.Errorf("isAbsoluteHTTP(%q) = %v, want %v", raw, got, want)
		}
	}
}
