package verbs

import (
	"reflect"
	"slices"
)

// Properties the jambonz verb specification allows but jambonz-feature-server 0.9.8's
// task for the verb never reads (docs/compatibility.md §8): each was checked in the
// file named, against every property of the verb in verb-specifications 0.1.13's
// specs.json. An application that sets one expects an effect jambonz does not give.
var ignoredProperties = map[string]struct {
	source string
	names  []string
}{
	// Never mentioned: no listen fork is started for a conference.
	"conference": {"lib/tasks/conference.js", []string{"listen"}},
	// Read nowhere in jambonz-feature-server (config earlyMedia: the call session
	// asks each task for its own earlyMedia, which config.js never sets).
	"config": {"lib/tasks/config.js", []string{"earlyMedia", "noiseIsolation", "trackTtsPlayout", "turnTaking"}},
	// The constructor reads this.passDtmfAsInputText (its own, always unset), not
	// the spec's passDtmfAsTextInput; queryInput is never read.
	"dialogflow": {"lib/tasks/dialogflow/index.js", []string{"passDtmfAsTextInput", "queryInput"}},
	// Copied onto the task and never used.
	"gather": {"lib/tasks/gather.js", []string{"speechTimeout"}},
	// auth and channel are copied and never used (the socket authenticates with
	// wsAuth); timeout only appears in a log line (maxLength is the limit).
	"listen": {"lib/tasks/listen.js", []string{"auth", "channel", "timeout"}},
	// The payload sent is message_sid, carrier, to, from and text.
	"message": {"lib/tasks/message.js", []string{"account_sid", "media"}},
	// The task reads closeOnStreamEmpty, which the specification does not define.
	"say": {"lib/tasks/say.js", []string{"closeStreamOnEmpty"}},
	// The create-call route reads these of its request; the task never does.
	"rest:dial": {"lib/tasks/rest_dial.js", []string{"account_sid", "application_sid", "call_status_hook", "dual_streams",
		"headers", "speech_recognizer_language", "speech_recognizer_vendor", "speech_synthesis_language",
		"speech_synthesis_vendor", "speech_synthesis_voice", "tag"}},
}

// Ignored returns the properties set in v (with a value other than the zero value,
// what decoding leaves for an absent property) that jambonz's code never reads, in
// the specification's spelling and sorted, and the file of jambonz-feature-server
// that runs the verb; nil when there are none.
func Ignored(v Verb) (names []string, source string) {
	ig, ok := ignoredProperties[v.Name()]
	if !ok {
		return nil, ""
	}
	rv := reflect.ValueOf(v).Elem()
	s := schemas[rv.Type()]
	for _, name := range ig.names {
		if i, ok := s.byName[name]; ok && !rv.Field(s.fields[i].index).IsZero() {
			names = append(names, name)
		}
	}
	if names == nil {
		return nil, ""
	}
	slices.Sort(names)
	return names, ig.source
}
