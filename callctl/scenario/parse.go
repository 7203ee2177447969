package scenario

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/verbs"
	"github.com/switchboard-voice/switchboard/fragment"
)

// Error is a scenario problem located at a line of the file (0 when unknown). Every
// error Parse returns is one.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Duration is a Go duration string in a scenario file ("1.5s", "2m").
type Duration time.Duration

// UnmarshalYAML reads a non-negative duration.
func (d *Duration) UnmarshalYAML(n ast.Node) error {
	s := strings.Trim(n.String(), `"'`)
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return &Error{Line: n.GetToken().Position.Line, Msg: fmt.Sprintf("%q is not a duration (write e.g. 1.5s or 2m)", s)}
	}
	*d = Duration(v)
	return nil
}

// Digits are DTMF digits in a scenario file: a string, or a number written bare
// (digits: 1234).
type Digits string

// UnmarshalYAML reads a string or an integer.
func (t *Digits) UnmarshalYAML(n ast.Node) error {
	switch n.Type() {
	case ast.StringType, ast.IntegerType:
		*t = Digits(strings.Trim(n.String(), `"'`))
		return nil
	}
	return &Error{Line: n.GetToken().Position.Line, Msg: "want a string of digits"}
}

// Parse decodes and checks a scenario (YAML, or JSON which is YAML too). Every error
// is an *Error naming the line at fault when it is known.
func Parse(src []byte) (*Scenario, error) {
	var s Scenario
	if err := strictYAML(src, &s); err != nil {
		var se *Error
		if errors.As(err, &se) {
			return nil, se
		}
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			// FormatError adds the source lines around the fault.
			return nil, &Error{Line: ye.GetToken().Position.Line, Msg: yaml.FormatError(err, false, true)}
		}
		return nil, &Error{Msg: err.Error()}
	}
	if errs := s.check(); len(errs) > 0 {
		return nil, checkError(errs, func(path string) int { return lineOf(src, path) })
	}
	return &s, nil
}

// strictYAML decodes src into v, refusing unknown keys. goccy/go-yaml v1.19.2 panics
// on some malformed tags (found by FuzzParse); that is reported as an error.
func strictYAML(src []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Msg: fmt.Sprintf("the YAML parser could not read this file (%v)", r)}
		}
	}()
	return yaml.UnmarshalWithOptions(src, v, yaml.Strict(), yaml.DisallowUnknownField())
}

// checkError is the *Error of a scenario's check failures, all of them at once: the
// first by line (those whose line is unknown last) gives its Line, and Msg lists
// them all in that order, one a line, each after the first naming its own line.
func checkError(errs []*pathError, line func(path string) int) *Error {
	all := make([]Error, len(errs))
	for i, e := range errs {
		all[i] = Error{Line: line(e.path), Msg: e.path[2:] + ": " + e.msg}
	}
	slices.SortStableFunc(all, func(a, b Error) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		}
		return a.Line - b.Line
	})
	msgs := []string{all[0].Msg}
	for _, e := range all[1:] {
		msgs = append(msgs, e.Error())
	}
	return &Error{Line: all[0].Line, Msg: strings.Join(msgs, "\n")}
}

// pathError is a check failure at a YAML path ("$.faults[0].close_code").
type pathError struct{ path, msg string }

func at(path, format string, args ...any) *pathError {
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

var (
	validDialStatuses = []string{"completed", "busy", "no-answer", "failed"}
	validStatuses     = []string{"trying", "ringing", "early-media", "in-progress", "queued", "failed", "busy", "no-answer", "completed"}
	validReasons      = []string{callctl.ReasonAppHangup, callctl.ReasonVerbsExhausted, callctl.ReasonCallerHangup,
		callctl.ReasonAppClosed, callctl.ReasonIdle, callctl.ReasonDeclined, callctl.ReasonCallHookFailed,
		callctl.ReasonInvalidPayload, callctl.ReasonConnectFailed, callctl.ReasonSessionFailed,
		callctl.ReasonReconnectFailed, callctl.ReasonMaxDuration, callctl.ReasonCanceled, callctl.ReasonAPIHangup, callctl.ReasonRedirectFailed, callctl.ReasonActionHookFailed,
		callctl.ReasonNotAnswered}
	validAlerts = []string{string(callctl.AlertInvalidAppPayload), string(callctl.AlertWebhookFailure),
		string(callctl.AlertWebhookConnectionFailure), string(callctl.AlertApplication)}
)

// maxRefusedAttempts bounds network.refuse + network.reset (callctl's own bound).
const maxRefusedAttempts = 100

// The WebSocket message types a request can have (expect.received[].type).
var validMessageTypes = []string{"session:new", "session:reconnect", "session:redirect", "verb:hook", "dial:confirm",
	"call:status", "verb:status", "jambonz:error", "llm:event", "llm:tool-call", "tts:tokens-result",
	"tts:streaming-event", "session:adulting"}

// check returns every problem of a decoded scenario, each at its YAML path, in the
// order checked (checkError sorts them by line).
func (s *Scenario) check() []*pathError {
	var errs []*pathError
	add := func(e *pathError) { errs = append(errs, e) }
	if s.App != "" {
		if err := CheckAppURL(s.App); err != nil {
			add(at("$.app", "%v", err))
		}
	}
	if h := s.StatusHook; h != "" && !strings.HasPrefix(h, "/") {
		if err := CheckAppURL(h); err != nil {
			add(at("$.status_hook", "%v (or write a path relative to the app, e.g. /status)", err))
		}
	}
	if h := s.QueueEventHook; h != "" {
		if err := CheckAppURL(h); err != nil {
			add(at("$.queue_event_hook", "%v", err))
		}
		if u, _ := url.Parse(h); u == nil || (u.Scheme != "http" && u.Scheme != "https") {
			add(at("$.queue_event_hook", "%q: want an absolute http(s) URL (the account's webhook)", h))
		}
	}
	for i, g := range s.Caller.Gathers {
		p := fmt.Sprintf("$.caller.gathers[%d]", i)
		n := 0
		for _, set := range []bool{g.Digits != "", g.Speech != "", g.Timeout} {
			if set {
				n++
			}
		}
		if n > 1 {
			add(at(p, "give one of digits, speech or timeout"))
		}
		if strings.Trim(string(g.Digits), "0123456789*#ABCD") != "" {
			add(at(p+".digits", "%q is not DTMF (0-9, *, #, A-D)", g.Digits))
		}
	}
	if a := s.Answer; a.Status != "" && !slices.Contains(validDialStatuses, a.Status) {
		add(at("$.answer.status", "%q: want one of %s", a.Status, strings.Join(validDialStatuses, ", ")))
	}
	if a := s.Answer; a.SIPStatus != 0 && (a.SIPStatus < 100 || a.SIPStatus > 699) {
		add(at("$.answer.sip_status", "%d is not a SIP status (100..699)", a.SIPStatus))
	}
	for _, name := range slices.Sorted(maps.Keys(s.SIP.Headers)) {
		if !validHeaderName(name) || strings.ContainsAny(s.SIP.Headers[name], "\r\n") {
			add(at("$.sip.headers", "%q: a SIP header is a token name and a one-line value", name))
		}
	}
	for i, d := range s.Caller.Dials {
		p := fmt.Sprintf("$.caller.dials[%d]", i)
		if d.Status != "" && !slices.Contains(validDialStatuses, d.Status) {
			add(at(p+".status", "%q: want one of %s", d.Status, strings.Join(validDialStatuses, ", ")))
		}
		if d.SIPStatus != 0 && (d.SIPStatus < 100 || d.SIPStatus > 699) {
			add(at(p+".sip_status", "%d is not a SIP status (100..699)", d.SIPStatus))
		}
	}
	errs = append(errs, s.Caller.check()...)
	for i, f := range s.Faults {
		p := fmt.Sprintf("$.faults[%d]", i)
		if f.AfterMessage < 1 {
			add(at(p+".after_message", "must be at least 1 (the message count starts at 1)"))
		}
		if f.CloseCode != 0 && (f.CloseCode < 1000 || f.CloseCode > 4999) {
			add(at(p+".close_code", "%d is outside 1000..4999 (leave it out for an abrupt TCP close)", f.CloseCode))
		}
	}
	n := s.Network
	switch {
	case n.Jitter > n.Latency:
		add(at("$.network.jitter", "%v is more than the latency %v (a message's latency is latency ± jitter)", time.Duration(n.Jitter), time.Duration(n.Latency)))
	case n.Refuse < 0:
		add(at("$.network.refuse", "must not be negative"))
	case n.Reset < 0:
		add(at("$.network.reset", "must not be negative"))
	case n.Refuse+n.Reset > maxRefusedAttempts:
		add(at("$.network", "refuse + reset is %d; at most %d (no retry policy tries more)", n.Refuse+n.Reset, maxRefusedAttempts))
	}
	e := s.Expect
	for _, list := range []struct {
		key   string
		names []string
	}{{"verbs", e.Verbs}, {"verbs_in_order", e.VerbsInOrder}, {"verbs_include", e.VerbsInclude}} {
		for i, v := range list.names {
			p := fmt.Sprintf("$.expect.%s[%d]", list.key, i)
			if !verbs.Known(v) {
				add(at(p, "%q is not a verb", v))
			}
			if c := verbs.Canonical(v); c != v {
				add(at(p, "%q runs as %q (jambonz normalises it): write %q", v, c, c))
			}
		}
	}
	for i, o := range e.ToolOutputs {
		p := fmt.Sprintf("$.expect.tool_outputs[%d]", i)
		switch {
		case o.Tool == "" && o.ID == "":
			add(at(p, "name the tool call: tool (its name) or id"))
		case o.Nth < 0:
			add(at(p+".nth", "counts from 1"))
		}
		for _, key := range slices.Sorted(maps.Keys(o.Output)) {
			if _, err := ParsePath(key); err != nil {
				add(at(p+".output", "%v", err))
			}
		}
	}
	for i, c := range e.Sent {
		p := fmt.Sprintf("$.expect.sent[%d]", i)
		switch {
		case c.Command == "":
			add(at(p, "name the command the app sent (e.g. llm:tool-output, tts:tokens)"))
		case c.Nth < 0:
			add(at(p+".nth", "counts from 1"))
		}
		for _, key := range slices.Sorted(maps.Keys(c.Payload)) {
			if _, err := ParsePath(key); err != nil {
				add(at(p+".payload", "%v", err))
			}
		}
	}
	if e.Status != "" && !slices.Contains(validStatuses, string(e.Status)) {
		add(at("$.expect.status", "%q: want one of %s", e.Status, strings.Join(validStatuses, ", ")))
	}
	if e.Reason != "" && !slices.Contains(validReasons, e.Reason) {
		add(at("$.expect.reason", "%q: want one of %s", e.Reason, strings.Join(validReasons, ", ")))
	}
	for _, list := range []struct {
		key    string
		alerts []callctl.AlertType
	}{{"alerts", e.Alerts}, {"no_alerts", e.NoAlerts}} {
		for i, a := range list.alerts {
			if !slices.Contains(validAlerts, string(a)) {
				add(at(fmt.Sprintf("$.expect.%s[%d]", list.key, i), "%q: want one of %s", a, strings.Join(validAlerts, ", ")))
			}
		}
	}
	for i, rule := range e.Compat {
		if !slices.Contains(callctl.CompatRules(), rule) {
			add(at(fmt.Sprintf("$.expect.compat[%d]", i), "%q is not a compat rule (docs/compatibility.md §2 lists them)", rule))
		}
	}
	for _, h := range slices.Sorted(maps.Keys(e.HookCounts)) {
		if e.HookCounts[h] < 0 {
			add(at("$.expect.hook_counts", "%s: a count must not be negative", h))
		}
	}
	for i, r := range e.Received {
		p := fmt.Sprintf("$.expect.received[%d]", i)
		switch {
		case r.Hook == "" && r.Type == "":
			add(at(p, "name the request: hook (e.g. /gather) or type (e.g. session:new), or both"))
		case r.Type != "" && !slices.Contains(validMessageTypes, r.Type):
			add(at(p+".type", "%q: want one of %s", r.Type, strings.Join(validMessageTypes, ", ")))
		case r.Nth < 0:
			add(at(p+".nth", "counts from 1"))
		case r.Method != "" && r.Method != "POST" && r.Method != "GET":
			add(at(p+".method", "%q: want POST or GET", r.Method))
		}
		for _, key := range slices.Sorted(maps.Keys(r.Payload)) {
			if _, err := ParsePath(key); err != nil {
				add(at(p+".payload", "%v", err))
			}
		}
	}
	return errs
}

// validHeaderName reports whether name is a SIP header name (RFC 3261 token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return true
}

// check returns every problem of the far end's script, each at its YAML path.
func (c *Caller) check() []*pathError {
	var errs []*pathError
	add := func(e *pathError) { errs = append(errs, e) }
	for i, u := range c.Speech {
		p := fmt.Sprintf("$.caller.speech[%d]", i)
		if (u.Speech == "") == (u.Digits == "") {
			add(at(p, "give one of speech or digits"))
		}
		if strings.Trim(string(u.Digits), "0123456789*#ABCD") != "" {
			add(at(p+".digits", "%q is not DTMF (0-9, *, #, A-D)", u.Digits))
		}
	}
	for i, l := range c.LLM {
		for j, t := range l.Turns {
			p := fmt.Sprintf("$.caller.llm[%d].turns[%d]", i, j)
			n := 0
			for _, set := range []bool{t.Agent != "", t.User != "", t.ToolCall != nil, t.Event != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				add(at(p, "give one of agent, user, tool_call or event"))
			}
			if t.ToolCall != nil && t.ToolCall.Name == "" {
				add(at(p+".tool_call", "a tool call needs a name"))
			}
			if t.Event != nil {
				if _, ok := t.Event["type"]; !ok {
					if _, google := t.Event["serverContent"]; !google {
						add(at(p+".event", "a vendor event needs its type (e.g. response.done), or serverContent for Google"))
					}
				}
			}
		}
	}
	for i, d := range c.Dials {
		p := fmt.Sprintf("$.caller.dials[%d]", i)
		switch d.AMD {
		case "", "human", "machine", "silence", "fax", "tone", "error":
		default:
			add(at(p+".amd", "%q: want one of human, machine, silence, fax, tone, error", d.AMD))
		}
		for j, k := range d.DTMF {
			q := fmt.Sprintf("%s.dtmf[%d]", p, j)
			if k.Digits == "" || strings.Trim(string(k.Digits), "0123456789*#ABCD") != "" {
				add(at(q+".digits", "%q is not DTMF (0-9, *, #, A-D)", k.Digits))
			}
			if k.Leg != "" && k.Leg != "callee" && k.Leg != "caller" {
				add(at(q+".leg", "%q: want callee or caller", k.Leg))
			}
		}
		if r := d.Refer; r != nil && r.Leg != "" && r.Leg != "callee" && r.Leg != "caller" {
			add(at(p+".refer.leg", "%q: want callee or caller", r.Leg))
		}
		for j, g := range d.Confirm {
			if g.Digits != "" && g.Speech != "" {
				add(at(fmt.Sprintf("%s.confirm[%d]", p, j), "give one of digits or speech"))
			}
		}
		for j, g := range d.Callee {
			if g.Digits != "" && g.Speech != "" {
				add(at(fmt.Sprintf("%s.callee[%d]", p, j), "give one of digits or speech"))
			}
		}
	}
	for i, q := range c.Queues {
		p := fmt.Sprintf("$.caller.queues[%d]", i)
		if q.Position < 0 || q.Size < 0 || q.Position > q.Size && q.Size > 0 {
			add(at(p, "position %d and size %d: want 1 <= position <= size", q.Position, q.Size))
		}
	}
	for i, cf := range c.Conferences {
		for j, e := range cf.Events {
			if e.Event != "start-talking" && e.Event != "stop-talking" {
				add(at(fmt.Sprintf("$.caller.conferences[%d].events[%d].event", i, j), "%q: want start-talking or stop-talking", e.Event))
			}
		}
		if cf.Members < 0 {
			add(at(fmt.Sprintf("$.caller.conferences[%d].members", i), "must not be negative"))
		}
	}
	return errs
}

// CheckAppURL checks an application URL that a scenario names (or that
// `switchboard test --app` puts in its place): what fragment.Parse accepts, without
// credentials (they go in --username and --password, which are never printed). The
// error says which.
func CheckAppURL(raw string) error {
	if _, err := fragment.Parse(raw); errors.Is(err, fragment.ErrUserInfo) {
		return errors.New("a URL with user:password@ (give credentials with --username and --password)")
	} else if err != nil {
		return err
	}
	return nil
}
