package scenario_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/transport"
)

// FuzzParse: any input parses or is refused with a located *scenario.Error (line 0
// when the position is unknown), never a panic; a scenario that parses always yields
// a script the runtime accepts, an app URL the runtime accepts, and expectations that
// evaluate against any call, each failure named by the expectation it starts with.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"caller:\n  gathers:\n    - digits: \"1\"\n      after: 1500ms\n",
		"faults:\n  - after_message: 5\n    close_code: 1011\nexpect:\n  verbs: [say, hangup]\n  status: completed\n",
		"caller: {dials: [{status: busy}], hangup_after: 45s}",
		`{"caller":{"gathers":[{"speech":"hi"}]},"expect":{"alerts":["webhook-failure"]}}`,
		"colour: blue\n", "caller:\n  gathers: [\n", "expect:\n  status: ringing-ish\n", "",
		"app: ws://127.0.0.1:3000/ws#rc=3\nnetwork:\n  latency: 50ms\n  jitter: 10ms\n  refuse: 1\n",
		"app: http://127.0.0.1:3000/call\nstatus_hook: /status\nexpect:\n  hooks_exact: [/call, /gather]\n  hook_counts: {/gather: 1}\n",
		"expect:\n  received:\n    - hook: /gather\n      payload:\n        speech.alternatives[0].transcript: hi\n        digits: \"1\"\n",
		"expect:\n  received:\n    - type: session:new\n      nth: 2\n      answered_within: 1s\n  no_alerts: [webhook-failure]\n  max_answer_time: 2s\n",
	}
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sc, err := scenario.Parse(src)
		if err != nil {
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %v (%T) is not a *scenario.Error", err, err)
			}
			return
		}
		app := "ws://127.0.0.1:1/"
		if sc.App != "" {
			app = sc.App
		}
		o := callctl.Options{AppURL: app, Script: sc.Script(), Hooks: noHooks{}}
		if err := o.Validate(); err != nil {
			t.Fatalf("parsed scenario gives invalid options: %v", err)
		}
		for _, r := range []*callctl.Result{{}, fuzzResult()} {
			for _, f := range sc.Expectations().Evaluate(r) {
				if f.Expectation == "" || !strings.HasPrefix(f.Message, f.Expectation+": ") || f.Event >= len(r.Timeline) {
					t.Fatalf("failure %+v of a timeline of %d lines", f, len(r.Timeline))
				}
			}
		}
	})
}

// noHooks stands in for the hook client an HTTP application's Options need: the fuzz
// target only validates them.
type noHooks struct{}

func (noHooks) Do(context.Context, transport.HookRequest) (*transport.HookResponse, error) {
	return nil, errors.New("not sent")
}

// fuzzResult is a small call for expectations to be evaluated against.
func fuzzResult() *callctl.Result {
	return &callctl.Result{
		Status: callctl.StatusCompleted, Reason: callctl.ReasonAppHangup, Verbs: []string{"say"}, Hooks: []string{"/call"},
		Timeline: []callctl.Event{{Kind: callctl.KindCallStart}, {Kind: callctl.KindHookAttempt}, {Kind: callctl.KindCallEnd}},
		Requests: []callctl.Request{{Transport: "http", Hook: "/call", Method: "POST", Payload: map[string]any{"a": []any{1.0}},
			Answered: true, AnswerTime: time.Second, Event: 1, HookIndex: 0}},
	}
}

// FuzzParseFile: any file parses or is refused with a *scenario.Error, never a
// panic; every case it yields has a scenario whose script and app the runtime
// accept, a valid name (unique in the file) when the file has cases, and the same
// cases whatever the environment when the file names no variable.
func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"app: http://${HOST:-127.0.0.1}:3000/call\ncases:\n  - name: a\n  - name: b\n    caller: {gathers: [{digits: \"${D:-1}\"}]}\n",
		"skip: later\nsnapshot: {payload: [digits, '*'], mask: [call_sid]}\n",
		"cases:\n  - {name: x, skip: no}\n  - name: x\n", "cases: [1]\n", "cases:\n  - name: &a a\n    expect: *a\n",
		"network:\n  refuse: ${N}\n", "a: $${X}\n", "- 1\n", "---\n---\n", "cases:\n  - !!map {name: t}\n",
	} {
		f.Add([]byte(seed))
	}
	env := func(name string) (string, bool) {
		return map[string]string{"HOST": "localhost", "N": "2", "D": "9"}[name], name != "UNSET"
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := scenario.ParseFile(src, scenario.FileOptions{LookupEnv: env})
		if err != nil {
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Fatalf("ParseFile error %v (%T) is not a *scenario.Error", err, err)
			}
			return
		}
		names := map[string]bool{}
		for _, c := range file.Cases {
			if c.Scenario == nil || (len(file.Cases) > 1 || c.Name != "") && (c.Name == "" || names[c.Name]) {
				t.Fatalf("case %+v of %d", c, len(file.Cases))
			}
			names[c.Name] = true
			app := "ws://127.0.0.1:1/"
			if c.Scenario.App != "" {
				app = c.Scenario.App
			}
			o := callctl.Options{AppURL: app, Script: c.Scenario.Script(), Hooks: noHooks{}}
			if err := o.Validate(); err != nil {
				t.Fatalf("parsed case gives invalid options: %v", err)
			}
		}
		if !strings.Contains(string(src), "$") {
			again, err := scenario.ParseFile(src, scenario.FileOptions{})
			if err != nil || len(again.Cases) != len(file.Cases) {
				t.Fatalf("without a lookup: %v", err)
			}
		}
	})
}
