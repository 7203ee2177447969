package callctl

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// Scenario is the YAML file of `simulate --scenario` (and the scenario of a call
// started through a node's API): what the caller and the network
// do during each simulated call, and what is expected of the call. Unknown keys are
// errors.
type Scenario struct {
	From   string          `yaml:"from"`
	To     string          `yaml:"to"`
	Caller ScenarioCaller  `yaml:"caller"`
	Faults []ScenarioFault `yaml:"faults"`
	Expect ScenarioExpect  `yaml:"expect"`
}

// ScenarioCaller is what the caller does.
type ScenarioCaller struct {
	Gathers     []ScenarioGather `yaml:"gathers"`
	Dials       []ScenarioDial   `yaml:"dials"`
	HangupAfter yamlDuration     `yaml:"hangup_after"`
}

// ScenarioGather is the caller's answer to one gather.
type ScenarioGather struct {
	Digits  yamlText     `yaml:"digits"`
	Speech  string       `yaml:"speech"`
	After   yamlDuration `yaml:"after"`
	Timeout bool         `yaml:"timeout"`
}

// ScenarioDial is the outcome of one dial.
type ScenarioDial struct {
	Status    string       `yaml:"status"`
	SIPStatus int          `yaml:"sip_status"`
	Duration  yamlDuration `yaml:"duration"`
}

// ScenarioFault is a node-side drop of the WebSocket.
type ScenarioFault struct {
	AfterMessage int `yaml:"after_message"`
	CloseCode    int `yaml:"close_code"`
}

// ScenarioExpect is what must have happened by the end of the call.
type ScenarioExpect struct {
	Verbs  []string `yaml:"verbs"`
	Hooks  []string `yaml:"hooks"`
	Status string   `yaml:"status"`
	Reason string   `yaml:"reason"`
	Alerts []string `yaml:"alerts"`
}

// ScenarioError is a scenario problem located at a line of the file (0 when unknown).
type ScenarioError struct {
	Line int
	Msg  string
}

func (e *ScenarioError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// yamlDuration is a Go duration string ("1.5s", "2m").
type yamlDuration time.Duration

func (d *yamlDuration) UnmarshalYAML(n ast.Node) error {
	s := strings.Trim(n.String(), `"'`)
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return &ScenarioError{Line: n.GetToken().Position.Line, Msg: fmt.Sprintf("%q is not a duration (write e.g. 1.5s or 2m)", s)}
	}
	*d = yamlDuration(v)
	return nil
}

// yamlText accepts a string or a number written bare (digits: 1234).
type yamlText string

func (t *yamlText) UnmarshalYAML(n ast.Node) error {
	switch n.Type() {
	case ast.StringType, ast.IntegerType:
		*t = yamlText(strings.Trim(n.String(), `"'`))
		return nil
	}
	return &ScenarioError{Line: n.GetToken().Position.Line, Msg: "want a string of digits"}
}

// ParseScenario decodes and checks a scenario (YAML, or JSON which is YAML too). Every error names the line at fault.
func ParseScenario(src []byte) (*Scenario, error) {
	var s Scenario
	if err := strictYAML(src, &s); err != nil {
		var se *ScenarioError
		if errors.As(err, &se) {
			return nil, se
		}
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			// FormatError adds the source lines around the fault.
			return nil, &ScenarioError{Line: ye.GetToken().Position.Line, Msg: yaml.FormatError(err, false, true)}
		}
		return nil, err
	}
	if err := s.check(); err != nil {
		var pe *pathError
		if errors.As(err, &pe) {
			return nil, &ScenarioError{Line: lineOf(src, pe.path), Msg: pe.path[2:] + ": " + pe.msg}
		}
		return nil, err
	}
	return &s, nil
}

// strictYAML decodes src into v, refusing unknown keys. goccy/go-yaml v1.19.2 panics
// on some malformed tags (found by FuzzParseScenario); that is reported as an error.
func strictYAML(src []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ScenarioError{Msg: fmt.Sprintf("the YAML parser could not read this file (%v)", r)}
		}
	}()
	return yaml.UnmarshalWithOptions(src, v, yaml.Strict(), yaml.DisallowUnknownField())
}

// pathError is a check failure at a YAML path ("$.faults[0].close_code").
type pathError struct{ path, msg string }

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func scenarioAt(path, format string, args ...any) error {
	return &pathError{path: path, msg: fmt.Sprintf(format, args...)}
}

// lineOf finds the line of a YAML path in src, 0 when it cannot be found.
func lineOf(src []byte, path string) int {
	p, err := yaml.PathString(path)
	if err != nil {
		return 0
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return 0
	}
	n, err := p.FilterFile(f)
	if err != nil || n == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

var validDialStatuses = []string{"completed", "busy", "no-answer", "failed"}
var validStatuses = []string{"trying", "ringing", "early-media", "in-progress", "queued", "failed", "busy", "no-answer", "completed"}
var validReasons = []string{ReasonAppHangup, ReasonVerbsExhausted, ReasonCallerHangup, ReasonAppClosed, ReasonIdle,
	ReasonDeclined, ReasonCallHookFailed, ReasonInvalidPayload, ReasonConnectFailed, ReasonSessionFailed,
	ReasonReconnectFailed, ReasonMaxDuration, ReasonCanceled, ReasonAPIHangup}

var validAlerts = []string{string(AlertInvalidAppPayload), string(AlertWebhookFailure), string(AlertWebhookConnectionFailure)}

func (s *Scenario) check() error {
	for i, g := range s.Caller.Gathers {
		p := fmt.Sprintf("$.caller.gathers[%d]", i)
		n := 0
		for _, set := range []bool{g.Digits != "", g.Speech != "", g.Timeout} {
			if set {
				n++
			}
		}
		if n > 1 {
			return scenarioAt(p, "give one of digits, speech or timeout")
		}
		if strings.Trim(string(g.Digits), "0123456789*#ABCD") != "" {
			return scenarioAt(p+".digits", "%q is not DTMF (0-9, *, #, A-D)", g.Digits)
		}
	}
	for i, d := range s.Caller.Dials {
		p := fmt.Sprintf("$.caller.dials[%d]", i)
		if d.Status != "" && !scenarioHas(validDialStatuses, d.Status) {
			return scenarioAt(p+".status", "%q: want one of %s", d.Status, strings.Join(validDialStatuses, ", "))
		}
		if d.SIPStatus != 0 && (d.SIPStatus < 100 || d.SIPStatus > 699) {
			return scenarioAt(p+".sip_status", "%d is not a SIP status (100..699)", d.SIPStatus)
		}
	}
	for i, f := range s.Faults {
		p := fmt.Sprintf("$.faults[%d]", i)
		if f.AfterMessage < 1 {
			return scenarioAt(p+".after_message", "must be at least 1 (the message count starts at 1)")
		}
		if f.CloseCode != 0 && (f.CloseCode < 1000 || f.CloseCode > 4999) {
			return scenarioAt(p+".close_code", "%d is outside 1000..4999 (leave it out for an abrupt TCP close)", f.CloseCode)
		}
	}
	for i, v := range s.Expect.Verbs {
		if !verbs.Known(v) {
			return scenarioAt(fmt.Sprintf("$.expect.verbs[%d]", i), "%q is not a verb", v)
		}
	}
	if s.Expect.Status != "" && !scenarioHas(validStatuses, s.Expect.Status) {
		return scenarioAt("$.expect.status", "%q: want one of %s", s.Expect.Status, strings.Join(validStatuses, ", "))
	}
	if s.Expect.Reason != "" && !scenarioHas(validReasons, s.Expect.Reason) {
		return scenarioAt("$.expect.reason", "%q: want one of %s", s.Expect.Reason, strings.Join(validReasons, ", "))
	}
	for i, a := range s.Expect.Alerts {
		if !scenarioHas(validAlerts, a) {
			return scenarioAt(fmt.Sprintf("$.expect.alerts[%d]", i), "%q: want one of %s", a, strings.Join(validAlerts, ", "))
		}
	}
	return nil
}

func scenarioHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Script converts the caller and fault parts into a Script.
func (s *Scenario) Script() Script {
	var sc Script
	for _, g := range s.Caller.Gathers {
		sc.Gathers = append(sc.Gathers, GatherInput{Digits: string(g.Digits), Speech: g.Speech, After: time.Duration(g.After)})
	}
	for _, d := range s.Caller.Dials {
		sc.Dials = append(sc.Dials, DialOutcome{Status: Status(d.Status), SIPStatus: d.SIPStatus, Duration: time.Duration(d.Duration)})
	}
	sc.HangupAfter = time.Duration(s.Caller.HangupAfter)
	for _, f := range s.Faults {
		sc.Faults = append(sc.Faults, Fault{AfterMessage: f.AfterMessage, CloseCode: f.CloseCode})
	}
	return sc
}

// Expectations converts the expect part.
func (s *Scenario) Expectations() Expectations {
	e := Expectations{Verbs: s.Expect.Verbs, Hooks: s.Expect.Hooks, Status: Status(s.Expect.Status), Reason: s.Expect.Reason}
	for _, a := range s.Expect.Alerts {
		e.Alerts = append(e.Alerts, AlertType(a))
	}
	return e
}
