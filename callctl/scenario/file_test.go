package scenario_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// A file with cases: each case is the file's keys with its own laid over them, a
// mapping key by key, a list or a string replacing the file's; skip and snapshot
// come the same way.
func TestParseFileCases(t *testing.T) {
	f, err := scenario.ParseFile([]byte(`app: http://127.0.0.1:3000/call
from: "+1555"
snapshot:
  payload: [digits]
caller:
  hangup_after: 45s
  gathers: [{digits: "1"}]
expect:
  no_alerts: [webhook-failure]
  verbs: [say]
cases:
  - name: presses-1
  - name: presses-2
    caller:
      gathers: [{digits: "2"}]
    expect:
      verbs: [say, hangup]
    snapshot:
      mask: [digits]
  - name: ws.too_
    app: ws://127.0.0.1:3000/ws
    skip: the WebSocket app is down
`), scenario.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 3 {
		t.Fatalf("%d cases", len(f.Cases))
	}
	one, two, ws := f.Cases[0], f.Cases[1], f.Cases[2]
	if one.Name != "presses-1" || one.Line != 12 || one.Skip != "" || one.Scenario.App != "http://127.0.0.1:3000/call" ||
		one.Scenario.From != "+1555" || one.Scenario.Caller.Gathers[0].Digits != "1" || len(one.Scenario.Expect.Verbs) != 1 ||
		strings.Join(one.Snapshot.Payload, ",") != "digits" || one.Snapshot.Mask != nil {
		t.Errorf("case 1 %+v %+v", one, one.Scenario)
	}
	s := two.Scenario
	if two.Name != "presses-2" || s.Caller.Gathers[0].Digits != "2" || s.Caller.HangupAfter == 0 ||
		strings.Join(s.Expect.Verbs, " ") != "say hangup" || len(s.Expect.NoAlerts) != 1 ||
		strings.Join(two.Snapshot.Payload, ",") != "digits" || strings.Join(two.Snapshot.Mask, ",") != "digits" {
		t.Errorf("case 2 %+v %+v", two, s)
	}
	if ws.Name != "ws.too_" || ws.Skip != "the WebSocket app is down" || ws.Scenario.App != "ws://127.0.0.1:3000/ws" || ws.Scenario.From != "+1555" {
		t.Errorf("case 3 %+v %+v", ws, ws.Scenario)
	}
	// The cases share nothing: changing one changes no other.
	two.Scenario.Caller.Gathers[0].Digits = "9"
	if one.Scenario.Caller.Gathers[0].Digits != "1" {
		t.Error("cases share their gathers")
	}

	f, err = scenario.ParseFile([]byte("skip: not yet\napp: http://127.0.0.1:3000/call\n"), scenario.FileOptions{})
	if err != nil || len(f.Cases) != 1 || f.Cases[0].Name != "" || f.Cases[0].Skip != "not yet" {
		t.Fatalf("file without cases: %+v, %v", f, err)
	}
	for _, src := range []string{"", "# only a comment\n"} {
		if f, err := scenario.ParseFile([]byte(src), scenario.FileOptions{}); err != nil || len(f.Cases) != 1 || f.Cases[0].Scenario == nil {
			t.Errorf("%q: %+v, %v", src, f, err)
		}
	}
	f, err = scenario.ParseFile([]byte("skip: all of them\ncases:\n  - name: a\n  - {name: b, skip: this one}\n"), scenario.FileOptions{})
	if err != nil || f.Cases[0].Skip != "all of them" || f.Cases[1].Skip != "this one" {
		t.Fatalf("file-wide skip: %+v, %v", f, err)
	}
}

// ${VAR} and ${VAR:-default} are read in every string, the cases' too, only with a
// lookup; a variable not set is an error at its line.
func TestParseFileEnvironment(t *testing.T) {
	src := []byte(`app: http://${APP_HOST:-127.0.0.1}:${APP_PORT}/call
network:
  refuse: ${REFUSE:-0}
cases:
  - name: a
    expect:
      received:
        - hook: /gather
          payload: {digits: "${DIGIT}"}
`)
	f, err := scenario.ParseFile(src, scenario.FileOptions{LookupEnv: lookup(map[string]string{"APP_PORT": "8080", "DIGIT": "7", "REFUSE": "2"})})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Cases[0].Scenario
	if s.App != "http://127.0.0.1:8080/call" || s.Network.Refuse != 2 || s.Expect.Received[0].Payload["digits"] != "7" {
		t.Fatalf("expanded %+v", s)
	}
	_, err = scenario.ParseFile(src, scenario.FileOptions{LookupEnv: lookup(map[string]string{"APP_PORT": "8080"})})
	var se *scenario.Error
	if !errors.As(err, &se) || se.Line != 9 || !strings.Contains(se.Msg, "DIGIT is not set") {
		t.Fatalf("unset variable: %v", err)
	}
	// Without a lookup the text stays as written: an app URL with ${ is refused as
	// a URL, not read from the environment.
	if _, err := scenario.ParseFile([]byte("app: http://${APP_HOST}/call\n"), scenario.FileOptions{}); !errors.As(err, &se) || se.Line != 1 || !strings.Contains(se.Msg, "app:") {
		t.Fatalf("without lookup: %v", err)
	}
}

// Every problem names its line, in a case or in the file's keys a case inherits.
func TestParseFileErrors(t *testing.T) {
	for _, tc := range []struct {
		src      string
		line     int
		contains string
	}{
		{"cases: []\n", 1, "cases: want a list"},
		{"cases: x\n", 1, "cases: want a list"},
		{"cases:\n  - x\n", 2, "cases[0]: want a mapping"},
		{"cases:\n  - caller: {}\n", 2, "cases[0]: give the case a name"},
		{"cases:\n  - name: a b\n", 2, `cases[0].name: "a b"`},
		{"cases:\n  - name: [a]\n", 2, "cases[0].name: want text"},
		{"cases:\n  - name: a\n  - name: a\n", 3, `"a" is also the name of cases[0]`},
		{"cases:\n  - name: a\n    colour: red\n", 3, `unknown field "colour"`},
		{"expect:\n  status: nope\ncases:\n  - name: a\n", 2, "expect.status"},
		{"cases:\n  - name: a\n    expect:\n      verbs: [sing]\n", 4, `"sing" is not a verb`},
		{"skip: true\n", 1, "skip: want text"},
		{"skip: ''\n", 1, "skip: give the reason"},
		{"snapshot:\n  payload: [a..b]\n", 2, "snapshot.payload[0]"},
		{"snapshot:\n  mask: ['a[x]']\n", 2, "snapshot.mask[0]"},
		{"snapshot:\n  keep: [a]\n", 2, `unknown field "keep"`},
		{"- a\n", 1, "a scenario is a mapping"},
		{"app: x\n---\napp: y\n", 3, "one YAML document"},
		{"caller:\n  gathers: [\n", 2, ""},
	} {
		_, err := scenario.ParseFile([]byte(tc.src), scenario.FileOptions{})
		var se *scenario.Error
		if !errors.As(err, &se) || se.Line != tc.line || !strings.Contains(se.Msg, tc.contains) {
			t.Errorf("%q: %v; want line %d naming %q", tc.src, err, tc.line, tc.contains)
		}
	}
}

// A file without cases reads as Parse reads it.
func TestParseFileAgreesWithParse(t *testing.T) {
	src := []byte("app: ws://127.0.0.1:3000/ws#rc=3\ncaller:\n  gathers: [{speech: hi}]\nfaults: [{after_message: 5, close_code: 1011}]\nexpect: {status: completed}\n")
	one, err := scenario.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := scenario.ParseFile(src, scenario.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	two := f.Cases[0].Scenario
	if one.App != two.App || one.Caller.Gathers[0].Speech != two.Caller.Gathers[0].Speech || len(two.Faults) != 1 ||
		two.Expect.Status != callctl.StatusCompleted {
		t.Fatalf("Parse %+v, ParseFile %+v", one, two)
	}
}
