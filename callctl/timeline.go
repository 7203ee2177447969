package callctl

import "time"

// timeline is a call's Result.Timeline while the call runs, in a compact form: an
// Event is 352 bytes, most of it fields its kind leaves empty, and a live call
// holds its timeline for as long as it lasts (docs/BENCHMARKS.md §3).
// Result.Timeline is filled from it when the call ends.
type timeline struct {
	events []compactEvent
	// spilled are the events compactEvent cannot hold exactly (fields outside
	// their kind's): kept whole, so that what Result.Timeline lists is exactly
	// what was recorded.
	spilled []Event
}

// compactEvent holds an Event's time, kind and the fields of its kind (see the
// Kind constants); spill, when not 0, is 1 + its index in timeline.spilled.
type compactEvent struct {
	at    time.Duration
	kind  Kind
	s     [3]string
	n     [2]int
	d     [2]time.Duration
	spill int
}

func (t *timeline) len() int { return len(t.events) }

// add appends e, whose CallSid is callSid.
func (t *timeline) add(e Event, callSid string) {
	ce := compactOf(e)
	if ce.event(callSid) != e {
		t.spilled = append(t.spilled, e)
		ce = compactEvent{spill: len(t.spilled)}
	}
	t.events = append(t.events, ce)
}

// all returns the events as recorded.
func (t *timeline) all(callSid string) []Event {
	if len(t.events) == 0 {
		return nil
	}
	out := make([]Event, len(t.events))
	for i, ce := range t.events {
		if ce.spill > 0 {
			out[i] = t.spilled[ce.spill-1]
		} else {
			out[i] = ce.event(callSid)
		}
	}
	return out
}

func compactOf(e Event) compactEvent {
	ce := compactEvent{at: e.At, kind: e.Kind}
	switch e.Kind {
	case KindCallStart:
		ce.s = [3]string{e.From, e.To, e.Direction}
	case KindHookAttempt:
		ce.s, ce.n, ce.d[0] = [3]string{e.URL, e.Transport, e.Class}, [2]int{e.Attempt, e.HTTPStatus}, e.Duration
	case KindHookRetry:
		ce.s[0], ce.n[0], ce.d[0] = e.URL, e.Attempt, e.Delay
	case KindWSOpen:
		ce.s[0] = e.URL
	case KindWSClose:
		ce.n[0] = e.Code
	case KindWSReconnect:
		ce.n[0] = e.Attempt
	case KindMsgSent, KindMsgRecv:
		ce.s[0], ce.s[1] = e.Type, e.MsgID
		ce.s[2] = e.Command // a message with Data spills
	case KindVerbStart, KindVerbEnd:
		ce.s[0] = e.Verb
	case KindCallStatus:
		ce.s[0] = e.Status
	case KindAlert:
		ce.s = [3]string{string(e.AlertType), e.URL, e.Detail}
	case KindCallEnd:
		ce.s[0], ce.s[1], ce.n[0] = e.Status, e.Reason, e.SIPStatus
	case KindCallerInput, KindSpoken:
		ce.s[0], ce.s[1] = e.Input, e.Value
	case KindFault:
		ce.s[0], ce.s[1], ce.n[0], ce.d = e.Fault, e.URL, e.Attempt, [2]time.Duration{e.Delay, e.Jitter}
	case KindCompat:
		ce.s[0], ce.s[1] = string(e.Rule), e.Detail
	}
	return ce
}

// event is the Event ce holds (compactOf's inverse).
func (ce compactEvent) event(callSid string) Event {
	e := Event{At: ce.at, CallSid: callSid, Kind: ce.kind}
	switch ce.kind {
	case KindCallStart:
		e.From, e.To, e.Direction = ce.s[0], ce.s[1], ce.s[2]
	case KindHookAttempt:
		e.URL, e.Transport, e.Class = ce.s[0], ce.s[1], ce.s[2]
		e.Attempt, e.HTTPStatus, e.Duration = ce.n[0], ce.n[1], ce.d[0]
	case KindHookRetry:
		e.URL, e.Attempt, e.Delay = ce.s[0], ce.n[0], ce.d[0]
	case KindWSOpen:
		e.URL = ce.s[0]
	case KindWSClose:
		e.Code = ce.n[0]
	case KindWSReconnect:
		e.Attempt = ce.n[0]
	case KindMsgSent, KindMsgRecv:
		e.Type, e.MsgID, e.Command = ce.s[0], ce.s[1], ce.s[2]
	case KindVerbStart, KindVerbEnd:
		e.Verb = ce.s[0]
	case KindCallStatus:
		e.Status = ce.s[0]
	case KindAlert:
		e.AlertType, e.URL, e.Detail = AlertType(ce.s[0]), ce.s[1], ce.s[2]
	case KindCallEnd:
		e.Status, e.Reason, e.SIPStatus = ce.s[0], ce.s[1], ce.n[0]
	case KindCallerInput, KindSpoken:
		e.Input, e.Value = ce.s[0], ce.s[1]
	case KindFault:
		e.Fault, e.URL, e.Attempt, e.Delay, e.Jitter = ce.s[0], ce.s[1], ce.n[0], ce.d[0], ce.d[1]
	case KindCompat:
		e.Rule, e.Detail = CompatRule(ce.s[0]), ce.s[1]
	}
	return e
}
