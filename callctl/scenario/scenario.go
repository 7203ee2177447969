package scenario

import (
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Scenario is one scenario file: what the caller and the network do during each
// simulated call, and what is expected of the call. Unknown keys are errors.
type Scenario struct {
	// App is the application the scenario runs against (`switchboard test`): an
	// http(s) or ws(s) URL, with its retry fragment.
	App string `yaml:"app"`
	// StatusHook receives an HTTP application's status notifications: absolute, or
	// a path relative to App.
	StatusHook string `yaml:"status_hook"`

	From string `yaml:"from"`
	To   string `yaml:"to"`
	// SIP is the simulated INVITE of an inbound call (its headers reach the call
	// hook's sip.headers).
	SIP SIP `yaml:"sip"`
	// Answer is how the far end of an outbound call (one a node's REST API creates)
	// answers.
	Answer Answer          `yaml:"answer"`
	Caller Caller          `yaml:"caller"`
	Faults []callctl.Fault `yaml:"faults"`
	// Network is what goes wrong on the network between the node and the app
	// (callctl.NetworkFaults).
	Network Network      `yaml:"network"`
	Expect  Expectations `yaml:"expect"`
}

// Network is the network section: latency and jitter on every message, a slow app,
// the first connection attempts refused or reset.
type Network struct {
	Latency Duration `yaml:"latency"`
	Jitter  Duration `yaml:"jitter"`
	SlowApp Duration `yaml:"slow_app"`
	Refuse  int      `yaml:"refuse"`
	Reset   int      `yaml:"reset"`
}

// SIP is the simulated INVITE: headers added to the SBC's (X-Originating-Carrier
// and X-Forwarded-For also name the call's origin).
type SIP struct {
	Headers map[string]string `yaml:"headers"`
}

// Answer is how the called party of an outbound call answers (callctl.AnswerOutcome):
// after ringing for After (with early media: 183), with Status (completed, busy,
// no-answer, failed) and SIPStatus.
type Answer struct {
	After      Duration `yaml:"after"`
	EarlyMedia bool     `yaml:"early_media"`
	Status     string   `yaml:"status"`
	SIPStatus  int      `yaml:"sip_status"`
}

// Caller is what the caller does.
type Caller struct {
	Gathers     []Gather `yaml:"gathers"`
	Dials       []Dial   `yaml:"dials"`
	HangupAfter Duration `yaml:"hangup_after"`
}

// Gather is the caller's answer to one gather: digits, speech, or (timeout: true,
// or nothing) no answer.
type Gather struct {
	// Digits are keyed one at a time, KeyInterval apart (default 250 ms), the
	// first After the prompt ended; the gather's rules decide which it takes.
	Digits      Digits   `yaml:"digits"`
	Speech      string   `yaml:"speech"`
	After       Duration `yaml:"after"`
	KeyInterval Duration `yaml:"key_interval"`
	Timeout     bool     `yaml:"timeout"`
}

// Dial is the outcome of one dial.
type Dial struct {
	Status    string   `yaml:"status"`
	SIPStatus int      `yaml:"sip_status"`
	Duration  Duration `yaml:"duration"`
}

// Script converts the caller and fault parts into the callctl.Script of a call.
func (s *Scenario) Script() callctl.Script {
	var sc callctl.Script
	for _, g := range s.Caller.Gathers {
		sc.Gathers = append(sc.Gathers, callctl.GatherInput{Digits: string(g.Digits), Speech: g.Speech, After: time.Duration(g.After),
			KeyInterval: time.Duration(g.KeyInterval)})
	}
	for _, d := range s.Caller.Dials {
		sc.Dials = append(sc.Dials, callctl.DialOutcome{Status: callctl.Status(d.Status), SIPStatus: d.SIPStatus, Duration: time.Duration(d.Duration)})
	}
	sc.HangupAfter = time.Duration(s.Caller.HangupAfter)
	sc.SIPHeaders = s.SIP.Headers
	sc.Answer = callctl.AnswerOutcome{After: time.Duration(s.Answer.After), EarlyMedia: s.Answer.EarlyMedia,
		Status: callctl.Status(s.Answer.Status), SIPStatus: s.Answer.SIPStatus}
	sc.Faults = append(sc.Faults, s.Faults...)
	n := s.Network
	sc.Network = callctl.NetworkFaults{Latency: time.Duration(n.Latency), Jitter: time.Duration(n.Jitter),
		SlowApp: time.Duration(n.SlowApp), Refuse: n.Refuse, Reset: n.Reset}
	return sc
}

// Expectations returns the expect part.
func (s *Scenario) Expectations() Expectations { return s.Expect }
