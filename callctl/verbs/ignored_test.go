package verbs

import (
	"reflect"
	"slices"
	"testing"
)

// Every property listed as ignored exists in its verb's table (a typo would make the
// warning silently impossible), and Ignored names exactly the ones set.
func TestIgnoredProperties(t *testing.T) {
	for verb, ig := range ignoredProperties {
		ctor, ok := registry[verb]
		if !ok {
			t.Errorf("%s: no such verb", verb)
			continue
		}
		s := schemaFor(reflect.TypeOf(ctor()).Elem())
		for _, name := range ig.names {
			if _, ok := s.byName[name]; !ok {
				t.Errorf("%s.%s: not a property of the verb", verb, name)
			}
		}
	}
	for _, tc := range []struct {
		json   string
		want   []string
		source string
	}{
		{`[{"verb":"gather","input":["speech"],"speechTimeout":3,"timeout":5}]`, []string{"speechTimeout"}, "lib/tasks/gather.js"},
		{`[{"verb":"gather","input":["speech"],"timeout":5}]`, nil, ""},
		{`[{"verb":"listen","url":"wss://x","timeout":10,"channel":2,"maxLength":5}]`, []string{"channel", "timeout"}, "lib/tasks/listen.js"},
		// jambonz closes the stream when it empties whatever this says: false is the
		// value that misleads.
		{`[{"verb":"say","stream":true,"closeStreamOnEmpty":false}]`, []string{"closeStreamOnEmpty"}, "lib/tasks/say.js"},
		{`[{"verb":"say","text":"hi"}]`, nil, ""},
		{`[{"verb":"config","earlyMedia":true,"notifyEvents":true}]`, []string{"earlyMedia"}, "lib/tasks/config.js"},
		{`[{"verb":"hangup"}]`, nil, ""},
	} {
		vs, err := Decode([]byte(tc.json))
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		got, source := Ignored(vs[0])
		if !slices.Equal(got, tc.want) || source != tc.source {
			t.Errorf("%s: Ignored = %v, %q; want %v, %q", tc.json, got, source, tc.want, tc.source)
		}
	}
}
