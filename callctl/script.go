package callctl

import (
	"fmt"
	"time"
)

// Script is what the caller and the network do during a simulated call: the input
// the caller gives at each gather, the outcome of each dial, when the caller hangs
// up, and faults injected from the node's side. The zero Script is a caller who
// never keys anything (every gather times out), dials that are answered, and no
// faults.
type Script struct {
	// Gathers are consumed in order, one per gather verb. A gather beyond the list
	// times out.
	Gathers []GatherInput
	// Dials are consumed in order, one per dial verb. A dial beyond the list is
	// answered and lasts 30 s.
	Dials []DialOutcome
	// HangupAfter, when positive, is the simulated time since the call started at
	// which the caller hangs up.
	HangupAfter time.Duration
	// Faults are node-side drops of a WebSocket application's connection.
	Faults []Fault
	// Network is what goes wrong on the network between the node and the
	// application, for every connection the call makes. Default: nothing.
	Network NetworkFaults
	// Answer is how the far end of an outbound call (one a REST API created) answers.
	// Default: it rings, then answers at once.
	Answer AnswerOutcome
	// SIPHeaders are headers of the simulated INVITE of an inbound call, added to
	// (or replacing) the SBC's: the call hook's sip.headers carries them, names in
	// lower case. X-Originating-Carrier and X-Forwarded-For also set the call's
	// originating_sip_trunk_name and originating_sip_ip.
	SIPHeaders map[string]string

	// Speech is what the caller says or keys outside gathers, in order, heard by a
	// config bargeIn or a transcribe (farend.go).
	Speech []Utterance
	// LLMs are consumed in order, one per llm verb. An llm beyond the list has a
	// conversation of one agent turn that ends normally.
	LLMs []LLMScript
	// Queues are consumed in order, one per enqueue; Dequeues one per dequeue;
	// Conferences one per conference; Bots one per dialogflow, lex or rasa.
	Queues      []QueueOutcome
	Dequeues    []DequeueOutcome
	Conferences []ConferenceScript
	Bots        []BotScript
}

// NetworkFaults are faults of the network between the node and the application,
// injected on the node's side of every connection the call makes (HTTP hooks, status
// hooks and the WebSocket alike), once the egress rules and URL checks passed it: the
// application sees them as it would see a bad network, and the call handles them
// under the retry fragment of the URL (docs/call-control.md §9). They are real waits
// on the connection, on the simulated clock too.
type NetworkFaults struct {
	// Latency is added to every message each way: a request, its answer, each
	// WebSocket frame (a round trip takes twice as long). Jitter varies each
	// message's latency by up to this much either way, uniformly; at most Latency.
	Latency, Jitter time.Duration
	// SlowApp delays everything the application sends (hook answers, WebSocket
	// messages) by this much more: an application that takes that long to answer.
	// Past JAMBONES_HTTP_TIMEOUT or the ack timeout, its answers time out.
	SlowApp time.Duration
	// Refuse refuses the call's first Refuse connection attempts (hook attempts and
	// WebSocket dials, counted together): connect failures (ct). Reset lets the next
	// Reset attempts connect and resets them as the application's answer arrives: the
	// application got the request, the call never gets the answer (ct).
	Refuse, Reset int
}

// maxRefused bounds NetworkFaults.Refuse + Reset: more than any retry policy tries.
const maxRefused = 100

// GatherInput is the caller's answer to one gather.
type GatherInput struct {
	// Digits keyed by the caller (DTMF: 0-9, *, #, A-D), one key at a time, or
	// Speech said by the caller; neither means the gather times out. The gather's
	// rules (finishOnKey, numDigits, minDigits, maxDigits, interDigitTimeout,
	// timeout) decide which keys it takes, as jambonz's do.
	Digits string
	Speech string
	// After is how long the caller takes to answer once the prompt ended (to the
	// first key). Default 2 s.
	After time.Duration
	// KeyInterval is the time between two keys. Default 250 ms.
	KeyInterval time.Duration
}

// keyInterval is KeyInterval or its default.
func (in GatherInput) keyInterval() time.Duration {
	if in.KeyInterval > 0 {
		return in.KeyInterval
	}
	return defaultKeyInterval
}

// DialOutcome is how one dial ends.
type DialOutcome struct {
	// Status is the dialed leg's final status: completed (answered, default),
	// busy, no-answer or failed.
	Status Status
	// SIPStatus is the final SIP status of the dialed leg (default from Status:
	// 200, 486, 487, 503).
	SIPStatus int
	// Duration is how long an answered leg stays up. Default 30 s.
	Duration time.Duration
	DialExtras
}

// AnswerOutcome is how the called party of an outbound call answers: after ringing
// for After (180 Ringing, or 183 Session Progress with SDP when EarlyMedia), with
// Status: completed (it answers, default), busy, no-answer (it rings until the
// call's RingTimeout) or failed, and SIPStatus (default from Status: 200, 486, 487,
// 503).
type AnswerOutcome struct {
	After      time.Duration
	EarlyMedia bool
	Status     Status
	SIPStatus  int
}

// withDefaults fills in the outcome's defaults.
func (a AnswerOutcome) withDefaults() AnswerOutcome {
	d := DialOutcome{Status: a.Status, SIPStatus: a.SIPStatus}.withDefaults()
	a.Status, a.SIPStatus = d.Status, d.SIPStatus
	return a
}

// Fault is a node-side fault on the WebSocket: once the N-th message of the call
// (sent or received, counted over the whole call, as numbered by the timeline's
// msg.sent and msg.recv events) has gone through, the node drops the connection. The
// tags are its keys in a scenario file (package scenario).
type Fault struct {
	AfterMessage int `yaml:"after_message"`
	// CloseCode is the close status sent; 0 closes the TCP connection abruptly,
	// without a close frame.
	CloseCode int `yaml:"close_code"`
}

// The simulated media (docs/call-control.md §4b).
const (
	defaultInputDelay   = 2 * time.Second        // GatherInput.After
	defaultKeyInterval  = 250 * time.Millisecond // GatherInput.KeyInterval
	defaultDialDuration = 30 * time.Second       // an answered dial leg, and a bridge after a dequeue or a conference
	defaultPlayDuration = 5 * time.Second        // per URL, when play sets no timeoutSecs
	defaultDialRing     = 5 * time.Second        // ringing before an answer or a give-up
	defaultDialTimeout  = 60 * time.Second       // a dial's timeout when the verb sets none
	speechPerCharacter  = 60 * time.Millisecond
	minimumSayDuration  = 500 * time.Millisecond
)

// validate returns one error per inconsistency of the script, each wrapping
// ErrInvalidOptions.
func (s Script) validate() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	for i, g := range s.Gathers {
		if g.Digits != "" && g.Speech != "" {
			bad("gather input %d has both digits and speech", i+1)
		}
		if g.After < 0 || g.KeyInterval < 0 {
			bad("gather input %d: negative delay", i+1)
		}
	}
	for i, d := range s.Dials {
		switch d.Status {
		case "", StatusCompleted, StatusBusy, StatusNoAnswer, StatusFailed:
		default:
			bad("dial outcome %d: status %q (want completed, busy, no-answer or failed)", i+1, d.Status)
		}
		if d.Duration < 0 || d.SIPStatus < 0 || d.SIPStatus > 699 {
			bad("dial outcome %d: negative duration or bad SIP status", i+1)
		}
	}
	if s.HangupAfter < 0 {
		bad("negative hangup time")
	}
	switch s.Answer.Status {
	case "", StatusCompleted, StatusBusy, StatusNoAnswer, StatusFailed:
	default:
		bad("answer: status %q (want completed, busy, no-answer or failed)", s.Answer.Status)
	}
	if s.Answer.After < 0 || s.Answer.SIPStatus < 0 || s.Answer.SIPStatus > 699 {
		bad("answer: negative delay or bad SIP status")
	}
	s.validateFarEnd(bad)
	n := s.Network
	if n.Latency < 0 || n.Jitter < 0 || n.SlowApp < 0 || n.Refuse < 0 || n.Reset < 0 {
		bad("network faults: negative latency, jitter, slow app, refuse or reset")
	}
	if n.Jitter > n.Latency {
		bad("network faults: jitter %v exceeds latency %v", n.Jitter, n.Latency)
	}
	if n.Refuse+n.Reset > maxRefused {
		bad("network faults: refuse + reset is %d, more than %d", n.Refuse+n.Reset, maxRefused)
	}
	for i, f := range s.Faults {
		if f.AfterMessage < 1 {
			bad("fault %d: after_message must be at least 1", i+1)
		}
		if f.CloseCode != 0 && (f.CloseCode < 1000 || f.CloseCode > 4999) {
			bad("fault %d: close code %d is outside 1000..4999", i+1, f.CloseCode)
		}
	}
	return errs
}

// withDefaults fills in the outcome's defaults, stated on DialOutcome's fields.
func (d DialOutcome) withDefaults() DialOutcome {
	if d.Status == "" {
		d.Status = StatusCompleted
	}
	if d.SIPStatus == 0 {
		switch d.Status {
		case StatusBusy:
			d.SIPStatus = 486
		case StatusNoAnswer:
			d.SIPStatus = 487
		case StatusFailed:
			d.SIPStatus = 503
		default:
			d.SIPStatus = 200
		}
	}
	if d.Duration == 0 && d.Status == StatusCompleted {
		d.Duration = defaultDialDuration
	}
	return d
}
