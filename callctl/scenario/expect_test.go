package scenario_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

func TestExpectations(t *testing.T) {
	r := &callctl.Result{Status: callctl.StatusCompleted, Verbs: []string{"say", "gather", "hangup"},
		Hooks: []string{"/call", "/status", "/gather"}, Alerts: []callctl.Alert{{Type: callctl.AlertWebhookFailure}}}
	ok := scenario.Expectations{Verbs: []string{"say", "gather", "hangup"}, Hooks: []string{"/call", "/gather"},
		Status: callctl.StatusCompleted, Alerts: []callctl.AlertType{callctl.AlertWebhookFailure}}
	if f := ok.Check(r); len(f) != 0 || !ok.Set() {
		t.Fatalf("unexpected failures %v", f)
	}
	bad := scenario.Expectations{Verbs: []string{"say", "hangup"}, Hooks: []string{"/gather", "/call"},
		Status: callctl.StatusFailed, Alerts: []callctl.AlertType{callctl.AlertInvalidAppPayload}}
	if f := bad.Check(r); len(f) != 4 {
		t.Fatalf("failures %v, want one per expectation", f)
	}
	if (scenario.Expectations{}).Set() {
		t.Fatal("empty expectations are set")
	}
}

// A scenario file's caller, faults and expectations reach the call's Script and the
// Expectations; every rejection names the line at fault.
func TestParse(t *testing.T) {
	sc, err := scenario.Parse([]byte(`from: "+1555"
caller:
  gathers:
    - digits: 12#
      after: 1.5s
    - timeout: true
  dials:
    - status: busy
  hangup_after: 2m
faults:
  - after_message: 4
network:
  latency: 100ms
  jitter: 20ms
  slow_app: 1s
  refuse: 2
  reset: 1
expect:
  verbs: [say, hangup]
  status: completed
  alerts: [webhook-failure]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Script()
	if sc.From != "+1555" || len(s.Gathers) != 2 || s.Gathers[0].Digits != "12#" || s.Gathers[0].After != 1500*time.Millisecond ||
		s.Dials[0].Status != callctl.StatusBusy || s.HangupAfter != 2*time.Minute ||
		len(s.Faults) != 1 || s.Faults[0] != (callctl.Fault{AfterMessage: 4}) ||
		s.Network != (callctl.NetworkFaults{Latency: 100 * time.Millisecond, Jitter: 20 * time.Millisecond, SlowApp: time.Second, Refuse: 2, Reset: 1}) {
		t.Fatalf("script %+v", s)
	}
	if e := sc.Expectations(); e.Status != callctl.StatusCompleted || len(e.Verbs) != 2 || e.Alerts[0] != callctl.AlertWebhookFailure {
		t.Fatalf("expectations %+v", e)
	}
	wantErrorLines(t, map[string]int{
		"caller:\n  gathers:\n    - digits: 1\n      colour: red\n":                 4,
		"caller:\n  hangup_after: soon\n":                                           2,
		"faults:\n  - after_message: 2\n  - after_message: 3\n    close_code: 99\n": 4,
		"expect:\n  verbs: [say, shout]\n":                                          2,
		"caller:\n  gathers:\n    - digits: \"1\"\n      speech: hi\n":              3,
		"expect:\n  status: completed\n  reason: tired\n":                           3,
		"caller:\n  dials:\n    - status: maybe\n":                                  3,
		"network:\n  latency: 10ms\n  jitter: 20ms\n":                               3,
		"network:\n  refuse: -1\n":                                                  2,
		"network:\n  reset: lots\n":                                                 2,
		"network:\n  refuse: 60\n  reset: 60\n":                                     2,
		"network:\n  latency: fast\n":                                               2,
		"network:\n  bandwidth: 1\n":                                                2,
	})
}

// The keys `switchboard test` added reach the Scenario, and each rejection names its
// line: a malformed app URL, credentials in a URL, a request named by nothing, an
// unknown message type, a bad path into a payload, wrong types.
func TestParseTestKeys(t *testing.T) {
	sc, err := scenario.Parse([]byte(`app: ws://127.0.0.1:3000/ws#rc=3
status_hook: /status
expect:
  hooks_exact: [/ws, /gather]
  hook_counts: {/gather: 1}
  no_alerts: [invalid-app-payload]
  max_answer_time: 1s
  received:
    - type: session:new
      payload:
        from: "+15551230000"
    - hook: /gather
      nth: 1
      method: POST
      answered_within: 500ms
      payload:
        speech.alternatives[0].transcript: sales please
        reason: speechDetected
`))
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Expectations()
	if sc.App != "ws://127.0.0.1:3000/ws#rc=3" || sc.StatusHook != "/status" || len(e.HooksExact) != 2 || e.HookCounts["/gather"] != 1 ||
		e.NoAlerts[0] != callctl.AlertInvalidAppPayload || time.Duration(e.MaxAnswerTime) != time.Second || len(e.Received) != 2 ||
		e.Received[0].Type != "session:new" || e.Received[1].Payload["speech.alternatives[0].transcript"] != "sales please" ||
		time.Duration(e.Received[1].AnsweredWithin) != 500*time.Millisecond || e.Received[1].Method != "POST" {
		t.Fatalf("scenario %+v, expectations %+v", sc, e)
	}
	wantErrorLines(t, map[string]int{
		"from: x\napp: ftp://x/call\n":                                            2,
		"app: http://\n":                                                          1,
		"app: http://u:p@127.0.0.1/call\n":                                        1,
		"app: [1]\n":                                                              1,
		"status_hook: status\n":                                                   1,
		"expect:\n  received:\n    - nth: 1\n":                                    3,
		"expect:\n  received:\n    - type: session:old\n":                         3,
		"expect:\n  received:\n    - hook: /g\n      nth: -1\n":                   4,
		"expect:\n  received:\n    - hook: /g\n      method: PUT\n":               4,
		"expect:\n  received:\n    - hook: /g\n      payload:\n        a..b: 1\n": 5,
		"expect:\n  received:\n    - hook: /g\n      answered_within: soon\n":     4,
		"expect:\n  received:\n    - hook: /g\n      colour: red\n":               4,
		"expect:\n  hook_counts: {/g: -1}\n":                                      2,
		"expect:\n  hook_counts: [/g]\n":                                          2,
		"expect:\n  no_alerts: [everything]\n":                                    2,
		"expect:\n  max_answer_time: 3\n":                                         2,
	})
}

// wantErrorLines checks that Parse refuses each source with a *scenario.Error at
// its line.
func wantErrorLines(t *testing.T, lines map[string]int) {
	t.Helper()
	for src, line := range lines {
		_, err := scenario.Parse([]byte(src))
		var se *scenario.Error
		if !errors.As(err, &se) || se.Line != line {
			t.Errorf("%q: error %v, want one at line %d", src, err, line)
		}
	}
}

// expect.compat names warnings that must be recorded; Strict fails on every other
// one, at its line of the timeline; an unknown rule is refused at its line.
func TestCompatExpectations(t *testing.T) {
	r := &callctl.Result{Status: callctl.StatusCompleted,
		Compat: []callctl.Compat{{Rule: callctl.CompatTagCommand, Detail: "ignored"}, {Rule: callctl.CompatUnknownCommand, Detail: "foo"}},
		Timeline: []callctl.Event{{Kind: callctl.KindCallStart}, {Kind: callctl.KindCompat, Rule: callctl.CompatTagCommand, Detail: "ignored"},
			{Kind: callctl.KindCompat, Rule: callctl.CompatUnknownCommand, Detail: "foo"}, {Kind: callctl.KindCallEnd}}}
	sc, err := scenario.Parse([]byte("expect:\n  compat: [tag-command]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Expectations()
	if f := e.Evaluate(r); len(f) != 0 || !e.Set() {
		t.Errorf("failures %v", f)
	}
	strict := e.Strict(r)
	if len(strict) != 1 || strict[0].Event != 2 || strict[0].Expectation != "strict" {
		t.Errorf("strict failures %+v, want the unknown-command warning at line 2", strict)
	}
	missing := scenario.Expectations{Compat: []callctl.CompatRule{callctl.CompatCommandBeforeAck}}
	if f := missing.Evaluate(r); len(f) != 1 || f[0].Expectation != "compat" {
		t.Errorf("failures %+v, want the missing command-before-ack", f)
	}
	if f := (scenario.Expectations{}).Strict(r); len(f) != 2 {
		t.Errorf("strict failures %+v, want both warnings", f)
	}
	wantErrorLines(t, map[string]int{"expect:\n  status: completed\n  compat: [tag-command, be-nice]\n": 3})
}

// The INVITE's headers, the outbound call's answer and the time between keys reach
// the Script; bad ones are refused at their line.
func TestParseSIPAndAnswer(t *testing.T) {
	sc, err := scenario.Parse([]byte(`sip:
  headers:
    X-Customer-Id: c-42
answer:
  after: 3s
  early_media: true
  status: busy
  sip_status: 603
caller:
  gathers:
    - digits: "12#"
      key_interval: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Script()
	if s.SIPHeaders["X-Customer-Id"] != "c-42" || s.Answer != (callctl.AnswerOutcome{After: 3 * time.Second, EarlyMedia: true, Status: callctl.StatusBusy, SIPStatus: 603}) ||
		s.Gathers[0].KeyInterval != time.Second || s.Gathers[0].Digits != "12#" {
		t.Fatalf("script %+v", s)
	}
	wantErrorLines(t, map[string]int{
		"answer:\n  status: maybe\n":             2,
		"answer:\n  sip_status: 99\n":            2,
		"sip:\n  headers:\n    \"a b\": x\n":     3,
		"sip:\n  headers:\n    X-A: \"x\\ny\"\n": 3,
		"sip:\n  via: x\n":                       2,
	})
}

// A scenario's check failures are reported all at once, sorted by line, the first
// giving the error's line and each other naming its own.
func TestParseReportsEveryProblemSorted(t *testing.T) {
	_, err := scenario.Parse([]byte(`expect:
  status: finished
caller:
  gathers:
    - digits: "12x"
faults:
  - after_message: 0
`))
	var se *scenario.Error
	if !errors.As(err, &se) {
		t.Fatalf("Parse: %v, want a *scenario.Error", err)
	}
	lines := strings.Split(se.Msg, "\n")
	if se.Line != 2 || len(lines) != 3 || !strings.HasPrefix(lines[0], "expect.status:") ||
		!strings.HasPrefix(lines[1], "line 5: caller.gathers[0].digits:") || !strings.HasPrefix(lines[2], "line 7: faults[0].after_message:") {
		t.Fatalf("error at line %d:\n%s\nwant the three problems, by line", se.Line, se.Msg)
	}
}
