package scenario_test

import (
	"errors"
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
	for src, line := range map[string]int{
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
	} {
		_, err := scenario.Parse([]byte(src))
		var se *scenario.Error
		if !errors.As(err, &se) || se.Line != line {
			t.Errorf("%q: error %v, want one at line %d", src, err, line)
		}
	}
}
