package callctl

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl/internal/wssession"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"github.com/switchboard-voice/switchboard/transport"
)

// FuzzParseCommand feeds arbitrary WebSocket messages through DecodeAppMessage and,
// for the commands it accepts, parseCommand (the command's data). Neither may panic;
// every refusal wraps ErrInvalidMessage or verbs.ErrInvalidPayload; the same input
// gives the same result; a redirect gives verbs or a call hook, never both, and a
// call hook given as a string is taken exactly as written.
func FuzzParseCommand(f *testing.F) {
	testkit.AddSeeds[[]byte](f,
		`{"type":"command","command":"redirect","data":[{"verb":"say","text":"x"}]}`,
		`{"type":"command","command":"redirect","queueCommand":true,"data":[]}`,
		`{"type":"command","command":"redirect","data":{"call_hook":"/next"}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":"https://app.example.com/x#rc=1"}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":{"url":"/y","method":"GET"}}}`,
		`{"type":"command","command":"redirect","data":{"url":"/z"}}`,
		`{"type":"command","command":"redirect","data":"/s"}`,
		`{"type":"command","command":"redirect","data":{"call_hook":""}}`,
		`{"type":"command","command":"redirect","data":{"call_hook":7}}`,
		`{"type":"command","command":"call:status","data":"completed"}`,
		`{"type":"command","command":"call:status","data":{"call_status":"no-answer"}}`,
		`{"type":"command","command":"call:status","data":{"call_status":1}}`,
		`{"type":"command","command":"tag","data":{"a":[1,{"b":null}]}}`,
		`{"type":"command","command":"mute:status","data":"mute"}`,
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
		if m.Type != wssession.MsgCommand {
			return
		}
		cmd, err := parseCommand(m)
		again, err2 := parseCommand(m)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(cmd, again) {
			t.Fatalf("parseCommand is not deterministic: %v/%v, %#v/%#v", err, err2, cmd, again)
		}
		if err != nil {
			if !errors.Is(err, wssession.ErrInvalidMessage) && !errors.Is(err, verbs.ErrInvalidPayload) {
				t.Fatalf("parseCommand error %v wraps neither ErrInvalidMessage nor ErrInvalidPayload", err)
			}
			return
		}
		switch m.Command {
		case "redirect":
			if cmd.hook != "" && cmd.verbs != nil {
				t.Fatalf("redirect gave both verbs and a call hook: %#v", cmd)
			}
			if m.Data[0] != '[' && cmd.hook == "" {
				t.Fatalf("redirect %s accepted without verbs or a call hook", m.Data)
			}
			var obj struct {
				CallHook string `json:"call_hook"`
				URL      string `json:"url"`
			}
			if json.Unmarshal(m.Data, &obj) == nil && obj.URL == "" && obj.CallHook != "" && cmd.hook != obj.CallHook {
				t.Fatalf("call_hook %q read as %q", obj.CallHook, cmd.hook)
			}
		case "tag":
			if cmd.tag == nil {
				t.Fatalf("tag accepted without an object: %s", m.Data)
			}
		}
	})
}

// FuzzResponseVerbs feeds arbitrary answers (status, Content-Type, body) to the hook
// response handling. It may not panic; an error wraps verbs.ErrInvalidPayload and,
// for a body that is not JSON-typed, names the jambonz cause; a JSON-typed body
// accepted is a valid verb array; a body of blanks or a 204 is no verbs; acceptVerbs
// agrees with responseVerbs.
func FuzzResponseVerbs(f *testing.F) {
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
		{204, "text/html", "x"},
		{200, "bogus;;", " "},
		{200, "text/plain", "\xff\xfe"},
	} {
		f.Add(s.status, s.ct, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, ct string, body []byte) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		resp := &transport.HookResponse{Status: status, Header: h, Body: body}
		vs, err := responseVerbs(resp)
		if aerr := acceptVerbs(status, h, body); (aerr == nil) != (err == nil) {
			t.Fatalf("acceptVerbs %v, responseVerbs %v", aerr, err)
		}
		if err != nil {
			if !errors.Is(err, verbs.ErrInvalidPayload) {
				t.Fatalf("error %v does not wrap ErrInvalidPayload", err)
			}
			if vs != nil {
				t.Fatalf("verbs %v returned with error %v", vs, err)
			}
			return
		}
		if status == 204 || strings.TrimSpace(string(body)) == "" {
			if vs != nil {
				t.Fatalf("no-verbs answer gave verbs %v", vs)
			}
			return
		}
		// Anything else accepted was JSON verbs.
		if _, derr := verbs.Decode(body); derr != nil {
			t.Fatalf("accepted body %q that does not decode: %v", body, derr)
		}
	})
}
