package scenario_test

import (
	"errors"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

// FuzzParse: any input parses or is refused with a located *scenario.Error (line 0
// when the position is unknown), never a panic; a scenario that parses always yields
// a script the runtime accepts.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"caller:\n  gathers:\n    - digits: \"1\"\n      after: 1500ms\n",
		"faults:\n  - after_message: 5\n    close_code: 1011\nexpect:\n  verbs: [say, hangup]\n  status: completed\n",
		"caller: {dials: [{status: busy}], hangup_after: 45s}",
		`{"caller":{"gathers":[{"speech":"hi"}]},"expect":{"alerts":["webhook-failure"]}}`,
		"colour: blue\n", "caller:\n  gathers: [\n", "expect:\n  status: ringing-ish\n", "",
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
		o := callctl.Options{AppURL: "ws://127.0.0.1:1/", Script: sc.Script()}
		if err := o.Validate(); err != nil {
			t.Fatalf("parsed scenario gives invalid options: %v", err)
		}
	})
}
