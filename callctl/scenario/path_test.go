package scenario_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchboard-voice/switchboard/callctl/scenario"
)

func TestParsePath(t *testing.T) {
	var payload any
	_ = json.Unmarshal([]byte(`{"digits":"1","speech":{"alternatives":[{"transcript":"sales"},{"transcript":"sails"}]},
		"customerData":{"a.b":1,"list":[[true]]},"sip:x":"y"}`), &payload)
	for _, tc := range []struct {
		path  string
		value any // nil: not found
	}{
		{"digits", "1"},
		{"speech.alternatives[0].transcript", "sales"},
		{"speech.alternatives[1].transcript", "sails"},
		{"speech.alternatives[2].transcript", nil},
		{"customerData.list[0][0]", true},
		{"sip:x", "y"},
		{"digits[0]", nil},             // an index into a string
		{"speech.alternatives.x", nil}, // a field of a list
		{"nothing", nil},
	} {
		p, err := scenario.ParsePath(tc.path)
		if err != nil {
			t.Errorf("%q: %v", tc.path, err)
			continue
		}
		if p.String() != tc.path {
			t.Errorf("%q reads back as %q", tc.path, p.String())
		}
		got, found := p.Lookup(payload)
		if found != (tc.value != nil) || found && got != tc.value {
			t.Errorf("%q: %v, %v; want %v", tc.path, got, found, tc.value)
		}
	}
	for _, bad := range []string{"", ".", "a.", ".a", "a..b", "[0]", "a[", "a[]", "a[x]", "a[-1]", "a[+1]", "a[0]b", "a]", "a[0]]", "a[99999999]", "a[ 1]", "a[00]", "a[01]"} {
		if _, err := scenario.ParsePath(bad); err == nil || !errors.Is(err, scenario.ErrPath) {
			t.Errorf("%q: error %v, want ErrPath", bad, err)
		}
	}
}

// FuzzParsePath: any text parses or is refused with ErrPath, never a panic; a path
// that parses reads back as the same text, its String parses to the same path, and
// looking it up in any JSON value never panics.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"digits", "speech.alternatives[0].transcript", "a[1][2].b", "a[", "[0]", "a..b", "é.ü[3]", "0[00]"} {
		f.Add(s, `{"a":[[1,{"b":2}]]}`)
	}
	f.Fuzz(func(t *testing.T, s, doc string) {
		p, err := scenario.ParsePath(s)
		if err != nil {
			if !errors.Is(err, scenario.ErrPath) {
				t.Fatalf("%q: error %v does not wrap ErrPath", s, err)
			}
			return
		}
		if len(p) == 0 || p.String() != s {
			t.Fatalf("%q parsed to %v, which reads back as %q", s, p, p.String())
		}
		again, err := scenario.ParsePath(p.String())
		if err != nil || len(again) != len(p) {
			t.Fatalf("%q: String %q does not parse back: %v", s, p.String(), err)
		}
		for i := range p {
			if again[i] != p[i] {
				t.Fatalf("%q: step %d %+v, then %+v", s, i, p[i], again[i])
			}
		}
		var v any
		if json.Unmarshal([]byte(doc), &v) == nil {
			_, _ = p.Lookup(v)
		}
	})
}
