package callctl_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
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
