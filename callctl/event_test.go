package callctl_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/internal/exampleapp"
)

// The --json contract, one line per kind, keys in order.
func TestEventJSON(t *testing.T) {
	at := 1500 * time.Millisecond
	for _, tc := range []struct {
		e    callctl.Event
		want string
	}{
		{callctl.Event{Kind: callctl.KindCallStart, From: "+1", To: "+2", Direction: "inbound"}, `"from":"+1","to":"+2","direction":"inbound"`},
		{callctl.Event{Kind: callctl.KindHookAttempt, URL: "http://a/b", Transport: "http", Attempt: 2, HTTPStatus: 503, Class: "5xx", Duration: 12 * time.Millisecond},
			`"url":"http://a/b","transport":"http","attempt":2,"status":503,"class":"5xx","duration_ms":12`},
		{callctl.Event{Kind: callctl.KindHookRetry, URL: "ws://a", Attempt: 3, Delay: time.Second}, `"url":"ws://a","attempt":3,"delay_ms":1000`},
		{callctl.Event{Kind: callctl.KindWSOpen, URL: "ws://a"}, `"url":"ws://a"`},
		{callctl.Event{Kind: callctl.KindWSClose, Code: 1006}, `"code":1006`},
		{callctl.Event{Kind: callctl.KindWSReconnect, Attempt: 1}, `"attempt":1`},
		{callctl.Event{Kind: callctl.KindMsgSent, Type: "verb:hook", MsgID: "4"}, `"type":"verb:hook","msgid":"4"`},
		{callctl.Event{Kind: callctl.KindMsgRecv, Type: "command"}, `"type":"command","msgid":""`},
		{callctl.Event{Kind: callctl.KindVerbStart, Verb: "sip:decline"}, `"verb":"sip:decline"`},
		{callctl.Event{Kind: callctl.KindVerbEnd, Verb: "say"}, `"verb":"say"`},
		{callctl.Event{Kind: callctl.KindCallStatus, Status: "in-progress"}, `"status":"in-progress"`},
		{callctl.Event{Kind: callctl.KindAlert, AlertType: callctl.AlertWebhookFailure, Detail: `say "hi"`}, `"type":"webhook-failure","detail":"say \"hi\""`},
		{callctl.Event{Kind: callctl.KindCallEnd, Status: "failed", Reason: "call-hook-failed", SIPStatus: 480}, `"status":"failed","reason":"call-hook-failed","sip_status":480`},
		{callctl.Event{Kind: callctl.KindCallerInput, Input: "speech", Value: "sales please"}, `"input":"speech","value":"sales please"`},
		{callctl.Event{Kind: callctl.KindCompat, Rule: callctl.CompatTagCommand, Detail: "jambonz ignores it"}, `"rule":"tag-command","detail":"jambonz ignores it"`},
	} {
		tc.e.At, tc.e.CallSid = at, "CA1"
		b, err := json.Marshal(tc.e)
		want := `{"t_ms":1500,"call_sid":"CA1","kind":"` + string(tc.e.Kind) + `",` + tc.want + `}`
		if err != nil || string(b) != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.e.Kind, b, want)
		}
		if !json.Valid(b) || tc.e.String() == "" {
			t.Errorf("%s: invalid JSON or empty text", tc.e.Kind)
		}
	}
}

// A timeline line's strings are as they are, "<" and "&" unescaped (json.Marshal's
// HTML escaping made a say's SSML read \u003cspeak\u003e in simulate --json).
func TestEventJSONUnescaped(t *testing.T) {
	e := callctl.Event{Kind: callctl.KindSpoken, CallSid: "CA1", Input: "say", Value: "<speak>sales & support</speak>"}
	b, err := e.MarshalJSON()
	want := `{"t_ms":0,"call_sid":"CA1","kind":"agent.spoke","source":"say","text":"<speak>sales & support</speak>"}`
	if err != nil || string(b) != want || !json.Valid(b) {
		t.Fatalf("got %s (%v), want %s", b, err, want)
	}
}

// The caller's input is on the timeline when it is complete (the prompt, then the
// caller's delay), just before the gather's action hook carries it to the app.
func TestCallerInputOnTimeline(t *testing.T) {
	for _, tc := range []struct {
		in           callctl.GatherInput
		input, value string
	}{
		{callctl.GatherInput{Digits: "2", After: 1500 * time.Millisecond}, "digits", "2"},
		{callctl.GatherInput{Speech: "sales please", After: 1500 * time.Millisecond}, "speech", "sales please"},
	} {
		o := baseOptions(t, serve(t, &exampleapp.HTTPApp{}, false)+"/call")
		o.Script.Gathers = []callctl.GatherInput{tc.in}
		r := run(t, o)
		i := slices.IndexFunc(r.Timeline, func(e callctl.Event) bool { return e.Kind == callctl.KindCallerInput })
		if i < 0 {
			t.Fatalf("no caller.input in %v", kinds(r))
		}
		e, next := r.Timeline[i], r.Timeline[i+1]
		// "Welcome to Switchboard." (23 characters) and the 55-character prompt, at 60 ms each.
		at := (23+55)*60*time.Millisecond + 1500*time.Millisecond
		if e.Input != tc.input || e.Value != tc.value || e.At != at || next.Kind != callctl.KindHookAttempt || !strings.HasSuffix(next.URL, "/gather") {
			t.Errorf("caller.input %+v (at %v, want %v), followed by %+v", e, e.At, at, next)
		}
	}
	// No input, no line: the gather times out.
	r := run(t, baseOptions(t, serve(t, &exampleapp.HTTPApp{}, false)+"/call"))
	if slices.Contains(kinds(r), string(callctl.KindCallerInput)) {
		t.Errorf("caller.input without input: %v", kinds(r))
	}
}
