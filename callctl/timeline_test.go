package callctl

import (
	"testing"
	"time"
)

// Every kind's own fields fit the compact form, and an event with fields outside
// its kind's is kept whole: the timeline gives back exactly what was recorded.
func TestTimelineKeepsEveryEvent(t *testing.T) {
	const sid = "CA1"
	events := []Event{
		{At: 1, Kind: KindCallStart, From: "a", To: "b", Direction: "inbound"},
		{At: 2, Kind: KindHookAttempt, URL: "u", Transport: "websocket", Attempt: 2, HTTPStatus: 101, Class: "success", Duration: time.Millisecond},
		{At: 3, Kind: KindHookRetry, URL: "u", Attempt: 3, Delay: time.Second},
		{Kind: KindWSOpen, URL: "ws://x"},
		{Kind: KindWSClose, Code: 1006},
		{Kind: KindWSReconnect, Attempt: 4},
		{Kind: KindMsgSent, Type: "session:new", MsgID: "1"},
		{Kind: KindMsgRecv, Type: "ack", MsgID: "1"},
		{Kind: KindVerbStart, Verb: "say"},
		{Kind: KindVerbEnd, Verb: "say"},
		{Kind: KindCallStatus, Status: "trying"},
		{Kind: KindAlert, AlertType: AlertWebhookFailure, URL: "u", Detail: "d"},
		{Kind: KindCallEnd, Status: "completed", Reason: "r", SIPStatus: 200},
		{Kind: KindCallerInput, Input: "digits", Value: "12"},
		{Kind: KindFault, Fault: "latency", URL: "u", Attempt: 1, Delay: 2, Jitter: 3},
	}
	var tl timeline
	for _, e := range events {
		e.CallSid = sid
		tl.add(e, sid)
	}
	if len(tl.spilled) != 0 {
		t.Errorf("%d events of their kind's fields only were kept whole", len(tl.spilled))
	}
	odd := Event{Kind: KindWSOpen, CallSid: sid, URL: "ws://x", Code: 1000}
	tl.add(odd, sid)
	if len(tl.spilled) != 1 {
		t.Errorf("an event with a field outside its kind's was not kept whole")
	}
	got := tl.all(sid)
	if len(got) != len(events)+1 {
		t.Fatalf("%d events, want %d", len(got), len(events)+1)
	}
	for i, e := range events {
		e.CallSid = sid
		if got[i] != e {
			t.Errorf("event %d: got %+v, want %+v", i, got[i], e)
		}
	}
	if got[len(events)] != odd {
		t.Errorf("kept whole: got %+v, want %+v", got[len(events)], odd)
	}
}
