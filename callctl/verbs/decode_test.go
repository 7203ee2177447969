package verbs

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDecodeVerbTable has one row per verb: its minimal valid form in both shapes, the
// value it must decode to, and a wrong-typed property.
func TestDecodeVerbTable(t *testing.T) {
	tests := []struct {
		name      string // verb as written
		want      Verb   // decoded minimal form
		wrongProp string // a property given a value of the wrong type
		wrongVal  string
		wrongWhy  string // expected Reason
	}{
		{"alert", &Alert{Message: "info=alert-internal"}, "message", `1`, "want string, got number"},
		{"answer", &Answer{}, "id", `7`, "want string, got number"},
		{"conference", &Conference{ConferenceName: "room"}, "maxParticipants", `"10"`, "want number, got string"},
		{"config", &Config{}, "synthesizer", `"google"`, "want object, got string"},
		{"dequeue", &Dequeue{QueueName: "q"}, "beep", `"yes"`, "want boolean, got string"},
		{"dial", &Dial{Target: []DialTarget{{Type: "phone", Number: "+15551234567"}}}, "target", `{"type":"phone"}`, "want array of objects, got object"},
		{"dtmf", &Dtmf{Dtmf: "1"}, "duration", `"long"`, "want number, got string"},
		{"dub", &Dub{Action: "addTrack", Track: "t"}, "gain", `true`, "want number or string, got boolean"},
		{"enqueue", &Enqueue{QueueName: "q"}, "waitHook", `42`, "want string or object, got number"},
		{"gather", &Gather{Input: []string{"digits"}}, "input", `"digits"`, "want array of strings, got string"},
		{"hangup", &Hangup{}, "headers", `["X"]`, "want object, got array"},
		{"leave", &Leave{}, "id", `{}`, "want string, got object"},
		{"listen", &Listen{URL: "wss://x"}, "sampleRate", `8000.5`, "want a whole number, got 8000.5"},
		{"stream", &Listen{URL: "wss://x"}, "url", `["wss://x"]`, "want string, got array"},
		{"llm", &Llm{Vendor: "ultravox", Auth: map[string]any{"apiKey": "k"}, LlmOptions: map[string]any{}}, "mcpServers", `["http://x"]`, "want object, got string"},
		{"s2s", &Llm{Vendor: "ultravox", Auth: map[string]any{"apiKey": "k"}, LlmOptions: map[string]any{}}, "events", `"all"`, "want array of strings, got string"},
		{"openai_s2s", &Llm{Vendor: "openai", Auth: map[string]any{"apiKey": "k"}, LlmOptions: map[string]any{"response_create": map[string]any{}}}, "vendor", `1`, "want string, got number"},
		{"microsoft_s2s", &Llm{Vendor: "microsoft", Auth: map[string]any{"apiKey": "k"}, ConnectOptions: map[string]any{"host": "h"}, LlmOptions: map[string]any{"response_create": map[string]any{}}}, "model", `1`, "want string, got number"},
		{"google_s2s", &Llm{Vendor: "google", Auth: map[string]any{"apiKey": "k"}, LlmOptions: map[string]any{"setup": map[string]any{}}}, "toolHook", `1`, "want string or object, got number"},
		{"elevenlabs_s2s", &Llm{Vendor: "elevenlabs", Auth: map[string]any{"agent_id": "a"}, LlmOptions: map[string]any{}}, "auth", `"a"`, "want object, got string"},
		{"deepgram_s2s", &Llm{Vendor: "deepgram", Auth: map[string]any{"apiKey": "k"}, LlmOptions: deepgramSettings}, "eventHook", `[]`, "want string or object, got array"},
		{"voiceagent_s2s", &Llm{Vendor: "voiceagent", Auth: map[string]any{"apiKey": "k"}, LlmOptions: deepgramSettings}, "actionHook", `true`, "want string or object, got boolean"},
		{"ultravox_s2s", &Llm{Vendor: "ultravox", Auth: map[string]any{"apiKey": "k"}, LlmOptions: map[string]any{}}, "llmOptions", `[]`, "want object, got array"},
		{"dialogflow", &Dialogflow{Credentials: "{}", Project: "p", Lang: "en-US"}, "model", `"xx"`, `"xx" is not one of es, cx, ces`},
		{"lex", &Lex{BotID: "b", BotAlias: "a", Credentials: map[string]any{}, Region: "us-east-1"}, "noInputTimeout", `"5"`, "want number, got string"},
		{"rasa", &Rasa{URL: "http://rasa"}, "prompt", `1`, "want string, got number"},
		{"rest:dial", &RestDial{CallHook: &Hook{URL: "/c"}, From: "+1", To: &DialTarget{Type: "phone", Number: "+2"}}, "to", `"+2"`, "want object, got string"},
		{"message", &Message{To: "+1", From: "+2"}, "media", `3`, "want string or array of strings, got number"},
		{"pause", &Pause{Length: 2}, "length", `"2"`, "want number, got string"},
		{"play", &Play{URL: []string{"http://a.mp3"}}, "loop", `true`, `want number or "forever", got boolean`},
		{"redirect", &Redirect{ActionHook: &Hook{URL: "/next"}}, "actionHook", `["/next"]`, "want string or object, got array"},
		{"say", &Say{Text: []string{"hello"}}, "text", `{"t":"x"}`, "want string or array of strings, got object"},
		{"sip:decline", &SipDecline{Status: 603}, "status", `"603"`, "want number, got string"},
		{"sip:refer", &SipRefer{ReferTo: "sip:x@y"}, "headers", `"X: y"`, "want object, got string"},
		{"sip:request", &SipRequest{Method: "INFO"}, "body", `{}`, "want string, got object"},
		{"tag", &Tag{Data: map[string]any{"a": float64(1)}}, "data", `[1]`, "want object, got array"},
		{"transcribe", &Transcribe{}, "recognizer", `"google"`, "want object, got string"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			for shape, doc := range map[string]string{
				"flat":   flat(t, tc.name, required[tc.name]),
				"nested": nested(t, tc.name, required[tc.name]),
			} {
				got, err := DecodeOne([]byte(doc))
				if err != nil {
					t.Fatalf("%s DecodeOne(%s): %v", shape, doc, err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s DecodeOne(%s) = %#v, want %#v", shape, doc, got, tc.want)
				}
				if got.Name() != tc.want.Name() {
					t.Errorf("Name() = %q, want %q", got.Name(), tc.want.Name())
				}
			}

			// Each required property missing.
			for _, prop := range slices.Sorted(maps.Keys(required[tc.name])) {
				props := map[string]string{}
				for k, v := range required[tc.name] {
					if k != prop {
						props[k] = v
					}
				}
				for _, doc := range []string{flat(t, tc.name, props), nested(t, tc.name, props)} {
					wantErr(t, "["+doc+"]", 0, tc.name, prop, "required")
				}
				// Null counts as missing.
				props[prop] = `null`
				wantErr(t, "["+flat(t, tc.name, props)+"]", 0, tc.name, prop, "required")
			}

			// A wrong type, in both shapes.
			props := map[string]string{tc.wrongProp: tc.wrongVal}
			for k, v := range required[tc.name] {
				if k != tc.wrongProp {
					props[k] = v
				}
			}
			field := tc.wrongProp
			if tc.name == "llm" {
				field = "mcpServers[0]"
			}
			for _, doc := range []string{flat(t, tc.name, props), nested(t, tc.name, props)} {
				wantErr(t, "["+doc+"]", 0, tc.name, field, tc.wrongWhy)
			}

			// An unknown property, in both shapes.
			props = map[string]string{"speak": `"x"`}
			for k, v := range required[tc.name] {
				props[k] = v
			}
			for _, doc := range []string{flat(t, tc.name, props), nested(t, tc.name, props)} {
				wantErr(t, `[{"verb":"answer"},`+doc+"]", 1, tc.name, "speak", "unknown property")
			}
		})
	}
	for _, name := range Names() {
		if !seen[name] {
			t.Errorf("verb %q has no row", name)
		}
	}
}

// wantErr decodes doc and checks every part of the resulting error, including that the
// message names the verb and the field.
func wantErr(t *testing.T, doc string, index int, verb, field, reason string) {
	t.Helper()
	vs, err := Decode([]byte(doc))
	if err == nil {
		t.Errorf("Decode(%s) = %d verbs, want error %q on %q", doc, len(vs), reason, field)
		return
	}
	if vs != nil {
		t.Errorf("Decode(%s) returned verbs along with an error", doc)
	}
	if !errors.Is(err, ErrInvalidPayload) {
		t.Errorf("Decode(%s) error %v does not wrap ErrInvalidPayload", doc, err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Decode(%s) error %T is not a *ValidationError", doc, err)
	}
	want := ValidationError{Index: index, Verb: verb, Field: field, Reason: reason}
	if reason == "required" && ve.Index == index && ve.Verb == verb && strings.HasPrefix(ve.Field, field+".") &&
		strings.HasPrefix(ve.Reason, "required for ") {
		// A property an llm vendor requires (auth.apiKey ...): jambonz's vendor task
		// names what is missing inside it.
		return
	}
	if *ve != want {
		t.Errorf("Decode(%s) error = %+v, want %+v", doc, *ve, want)
	}
	msg := err.Error()
	for _, part := range []string{"invalid-app-payload", verb, field, reason} {
		if !strings.Contains(msg, part) {
			t.Errorf("error message %q does not mention %q", msg, part)
		}
	}
}

func TestDecodeRules(t *testing.T) {
	tests := []struct {
		doc    string
		index  int
		verb   string
		field  string
		reason string
	}{
		// Shapes.
		{`{"verb":"say","text":"hi"}`, -1, "", "", "want array of verbs, got object"},
		{`"say"`, -1, "", "", "want array of verbs, got string"},
		{`[1]`, 0, "", "", "want verb object, got number"},
		{`[null]`, 0, "", "", "want verb object, got null"},
		{`[{}]`, 0, "", "", `missing verb property: want {"verb":"name",...} or {"name":{...}}`},
		{`[{"say":{"text":"a"},"play":{"url":"b"}}]`, 0, "", "", `missing verb property: want {"verb":"name",...} or {"name":{...}}`},
		{`[{"verb":7,"text":"a"}]`, 0, "", "verb", "want string, got number"},
		{`[{"verb":"shout","text":"a"}]`, 0, "", "", `unknown verb "shout"`},
		{`[{"shout":{}}]`, 0, "", "", `unknown verb "shout"`},
		{`[{"say":"hello"}]`, 0, "say", "", "want object of properties, got string"},
		{`[{"verb":"SAY","text":"a"}]`, 0, "", "", `unknown verb "SAY"`},
		{`[{"verb":"say","Text":"a","text":"b"}]`, 0, "say", "Text", "unknown property"},
		// Hooks.
		{`[{"verb":"redirect","actionHook":""}]`, 0, "redirect", "actionHook", "must not be empty"},
		{`[{"verb":"redirect","actionHook":{"method":"GET"}}]`, 0, "redirect", "actionHook.url", "required"},
		{`[{"verb":"redirect","actionHook":{"url":"/a","method":"PUT"}}]`, 0, "redirect", "actionHook.method", `"PUT" is not one of GET, POST`},
		{`[{"verb":"redirect","actionHook":{"url":"/a","retries":3}}]`, 0, "redirect", "actionHook.retries", "unknown property"},
		{`[{"verb":"redirect","actionHook":{"url":5}}]`, 0, "redirect", "actionHook.url", "want string, got number"},
		// Numbers.
		{`[{"verb":"pause","length":-1}]`, 0, "pause", "length", "must not be negative"},
		{`[{"verb":"gather","numDigits":1.5}]`, 0, "gather", "numDigits", "want a whole number, got 1.5"},
		{`[{"verb":"gather","numDigits":1e12}]`, 0, "gather", "numDigits", "1e12 is too large"},
		{`[{"verb":"play","url":"a","loop":"always"}]`, 0, "play", "loop", `want a whole number or "forever", got "always"`},
		{`[{"verb":"play","url":"a","timeoutSecs":"soon"}]`, 0, "play", "timeoutSecs", `"soon" is not a finite number`},
		{`[{"verb":"play","url":"a","timeoutSecs":"NaN"}]`, 0, "play", "timeoutSecs", `"NaN" is not a finite number`},
		{`[{"verb":"play","url":"a","seekOffset":true}]`, 0, "play", "seekOffset", "want number or numeric string, got boolean"},
		// Enums and lists.
		{`[{"verb":"gather","input":["digits","voice"]}]`, 0, "gather", "input[1]", `"voice" is not one of digits, speech`},
		{`[{"verb":"gather","input":["digits",3]}]`, 0, "gather", "input[1]", "want string, got number"},
		{`[{"verb":"listen","url":"wss://x","mixType":"quad"}]`, 0, "listen", "mixType", `"quad" is not one of mono, stereo, mixed`},
		{`[{"verb":"dub","action":"mute","track":"t"}]`, 0, "dub", "action", `"mute" is not one of addTrack, removeTrack, silenceTrack, playOnTrack, sayOnTrack`},
		{`[{"verb":"play","url":[]}]`, 0, "play", "url", "must not be empty"},
		{`[{"verb":"conference","name":""}]`, 0, "conference", "name", "must not be empty"},
		// Nested objects.
		{`[{"verb":"dial","target":[]}]`, 0, "dial", "target", "must not be empty"},
		{`[{"verb":"dial","target":[{"number":"1"}]}]`, 0, "dial", "target[0].type", "required"},
		{`[{"verb":"dial","target":[{"type":"phone","number":"1"},{"type":"pstn"}]}]`, 0, "dial", "target[1].type", `"pstn" is not one of phone, sip, user, teams`},
		{`[{"verb":"dial","target":[{"type":"sip"}]}]`, 0, "dial", "target[0].sipUri", "required for type sip"},
		{`[{"verb":"dial","target":[{"type":"user"}]}]`, 0, "dial", "target[0].name", "required for type user"},
		{`[{"verb":"dial","target":[{"type":"teams","number":"1","dtmf":"1"}]}]`, 0, "dial", "target[0].dtmf", "unknown property"},
		{`[{"verb":"dial","target":["+1555"]}]`, 0, "dial", "target[0]", "want object, got string"},
		{`[{"verb":"dial","target":[{"type":"phone","number":"1"}],"dub":[{"action":"addTrack"}]}]`, 0, "dial", "dub[0].track", "required"},
		{`[{"verb":"dial","target":[{"type":"phone","number":"1"}],"headers":{"X":[1]}}]`, 0, "dial", "headers.X", "want string, got array"},
		{`[{"verb":"gather","say":{"txt":"hi"}}]`, 0, "gather", "say.txt", "unknown property"},
		{`[{"verb":"gather","say":{}}]`, 0, "gather", "say.text", "required"},
		{`[{"verb":"gather","play":{"url":"a","actionHook":{}}}]`, 0, "gather", "play.actionHook.url", "required"},
		{`[{"verb":"gather","say":"hi"}]`, 0, "gather", "say", "want object, got string"},
		// Rules across properties.
		{`[{"verb":"gather","minDigits":5,"maxDigits":3}]`, 0, "gather", "minDigits", "5 is greater than maxDigits 3"},
		{`[{"verb":"sip:decline","status":200}]`, 0, "sip:decline", "status", "200 is not a SIP status between 300 and 699"},
		{`[{"verb":"say","stream":false}]`, 0, "say", "text", "required"},
		// The first bad verb is the one reported.
		{`[{"verb":"say","text":"a"},{"verb":"pause"},{"verb":"bogus"}]`, 1, "pause", "length", "required"},
	}
	for _, tc := range tests {
		t.Run(tc.doc, func(t *testing.T) {
			wantErr(t, tc.doc, tc.index, tc.verb, tc.field, tc.reason)
		})
	}
}

func TestDecodeValues(t *testing.T) {
	doc := `[
	  {"verb":"say","text":["a","b"],"loop":"forever","id":"intro"},
	  {"play":{"url":"http://a","loop":"3","timeoutSecs":"2.5"}},
	  {"verb":"gather","input":["speech","digits"],"actionHook":{"url":"/g","method":"get","username":"u","password":"p"},
	   "partialResultHook":"/p","say":{"text":"press"},"timeout":8,"numDigits":1},
	  {"verb":"dial","target":[{"type":"sip","sipUri":"sip:a@b"}],"headers":{"X-N":3,"X-B":true,"X-S":"s"},"dtmfHook":"/d","stream":{"url":"wss://l"}},
	  {"verb":"stream","url":"wss://x","metadata":{"k":[1,"v"]}},
	  {"verb":"say","stream":true},
	  {"verb":"hangup","headers":null}
	]`
	vs, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Verb{
		&Say{VerbID: "intro", Text: []string{"a", "b"}, Loop: LoopForever},
		&Play{URL: []string{"http://a"}, Loop: 3, TimeoutSecs: 2.5},
		&Gather{Input: []string{"speech", "digits"}, ActionHook: &Hook{URL: "/g", Method: "GET", Username: "u", Password: "p"},
			PartialResultHook: &Hook{URL: "/p"}, Say: &Say{Text: []string{"press"}}, Timeout: new(8.0), NumDigits: 1},
		&Dial{Target: []DialTarget{{Type: "sip", SipURI: "sip:a@b"}}, Headers: map[string]string{"X-N": "3", "X-B": "true", "X-S": "s"},
			DtmfHook: &Hook{URL: "/d"}, Stream: &Listen{URL: "wss://l"}},
		&Listen{URL: "wss://x", Metadata: map[string]any{"k": []any{float64(1), "v"}}},
		&Say{Stream: true},
		&Hangup{},
	}
	if !reflect.DeepEqual(vs, want) {
		for i := range want {
			if i < len(vs) && !reflect.DeepEqual(vs[i], want[i]) {
				t.Errorf("verb %d = %#v, want %#v", i, vs[i], want[i])
			}
		}
		t.Fatalf("got %d verbs, want %d", len(vs), len(want))
	}
	if vs[0].ID() != "intro" || vs[1].ID() != "" {
		t.Errorf("IDs = %q, %q", vs[0].ID(), vs[1].ID())
	}
	if vs[4].Name() != "listen" {
		t.Errorf("stream decoded as %q, want listen", vs[4].Name())
	}
	hooks := vs[2].Hooks()
	if len(hooks) != 2 || hooks["actionHook"].URL != "/g" || hooks["partialResultHook"].URL != "/p" {
		t.Errorf("gather Hooks() = %v", hooks)
	}
	if h := vs[0].Hooks(); h != nil {
		t.Errorf("say Hooks() = %v, want nil", h)
	}
	if got := vs[3].Hooks(); len(got) != 1 || got["dtmfHook"] == nil {
		t.Errorf("dial Hooks() = %v, want only dtmfHook", got)
	}
	if m := hooks["partialResultHook"].MethodOrDefault(); m != "POST" {
		t.Errorf("MethodOrDefault() = %q, want POST", m)
	}
	if m := hooks["actionHook"].MethodOrDefault(); m != "GET" {
		t.Errorf("MethodOrDefault() = %q, want GET", m)
	}
}

// TestHooksCoverSection8 checks that Hooks reports exactly the hook properties
// docs/call-control.md §8 lists for each verb (plus the newer ones jambonz added).
func TestHooksCoverSection8(t *testing.T) {
	want := map[string][]string{
		"gather":      {"actionHook", "partialResultHook"},
		"dial":        {"actionHook", "confirmHook", "dtmfHook", "onHoldHook", "referHook"},
		"conference":  {"actionHook", "enterHook", "statusHook", "waitHook"},
		"enqueue":     {"actionHook", "waitHook"},
		"play":        {"actionHook"},
		"listen":      {"actionHook"},
		"dequeue":     {"actionHook"},
		"message":     {"actionHook"},
		"sip:request": {"actionHook"},
		"sip:refer":   {"actionHook", "eventHook"},
		"transcribe":  {"transcriptionHook", "translationHook"},
		"llm":         {"actionHook", "eventHook", "toolHook"},
		"redirect":    {"actionHook"},
		"config":      {"referHook", "sipRequestWithinDialogHook"},
		"rest:dial":   {"call_hook", "call_status_hook", "referHook"},
		"dialogflow":  {"actionHook", "eventHook"},
		"lex":         {"actionHook", "eventHook"},
		"rasa":        {"actionHook", "eventHook"},
	}
	for _, name := range Names() {
		props := map[string]string{}
		for k, v := range required[name] {
			props[k] = v
		}
		for _, h := range want[name] {
			props[h] = `"/` + h + `"`
		}
		v, err := DecodeOne([]byte(flat(t, name, props)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := slices.Sorted(maps.Keys(v.Hooks()))
		if len(got) != len(want[name]) || (len(got) > 0 && !reflect.DeepEqual(got, want[name])) {
			t.Errorf("%s Hooks() keys = %v, want %v", name, got, want[name])
		}
		for k, h := range v.Hooks() {
			if h.URL != "/"+k {
				t.Errorf("%s Hooks()[%s].URL = %q", name, k, h.URL)
			}
		}
	}
}

// deepgramSettings is the least llmOptions jambonz's voice agent task accepts.
var deepgramSettings = map[string]any{"Settings": map[string]any{"agent": map[string]any{"think": map[string]any{
	"provider": map[string]any{"type": "open_ai", "model": "gpt"}}}}}

func TestDecodeEmptyArray(t *testing.T) {
	vs, err := Decode([]byte(" [ ] "))
	if err != nil || vs == nil || len(vs) != 0 {
		t.Fatalf("Decode([]) = %v, %v; want empty non-nil slice", vs, err)
	}
}

func TestDecodeInvalidJSON(t *testing.T) {
	for _, doc := range []string{``, `[`, `[{"verb":"say","text":"a"}`, `[{"verb":"say",}]`, `[{"verb":"say","text":"a"}] x`, "[\"\xff\"", `nul`} {
		_, err := Decode([]byte(doc))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Index != -1 {
			t.Errorf("Decode(%q) = %v, want a ValidationError at index -1", doc, err)
		}
		_, err = DecodeOne([]byte(doc))
		if !errors.Is(err, ErrInvalidPayload) {
			t.Errorf("DecodeOne(%q) = %v, want ErrInvalidPayload", doc, err)
		}
	}
}

func TestDecodeBounds(t *testing.T) {
	deep := `[{"verb":"tag","data":` + strings.Repeat(`{"a":`, MaxNesting) + `1` + strings.Repeat(`}`, MaxNesting) + `}]`
	_, err := Decode([]byte(deep))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Reason, "nesting deeper than") {
		t.Errorf("deeply nested payload: %v", err)
	}
	// Brackets inside strings do not count as nesting.
	quoted := `[{"verb":"say","text":"` + strings.Repeat(`[{\"`, 200) + `"}]`
	if _, err := Decode([]byte(quoted)); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
	big := `[{"verb":"say","text":"` + strings.Repeat("a", MaxPayloadBytes) + `"}]`
	if _, err := Decode([]byte(big)); !errors.As(err, &ve) || !strings.Contains(ve.Reason, "exceeds the limit") {
		t.Errorf("oversized payload: %v", err)
	}
	if _, err := DecodeOne([]byte(big[1 : len(big)-1])); !errors.Is(err, ErrInvalidPayload) {
		t.Errorf("oversized single verb: %v", err)
	}
	many := "[" + strings.Repeat(`{"verb":"answer"},`, MaxVerbs) + `{"verb":"answer"}]`
	if _, err := Decode([]byte(many)); !errors.As(err, &ve) || !strings.Contains(ve.Reason, "verbs exceed the limit") {
		t.Errorf("too many verbs: %v", err)
	}
	exactly := "[" + strings.Repeat(`{"verb":"answer"},`, MaxVerbs-1) + `{"verb":"answer"}]`
	if vs, err := Decode([]byte(exactly)); err != nil || len(vs) != MaxVerbs {
		t.Errorf("MaxVerbs verbs: %d, %v", len(vs), err)
	}
}

func TestValidationErrorMessage(t *testing.T) {
	tests := []struct {
		err  ValidationError
		want string
	}{
		{ValidationError{Index: 2, Verb: "gather", Field: "actionHook.url", Reason: "required"}, `invalid-app-payload: verb[2] "gather" field "actionHook.url": required`},
		{ValidationError{Index: -1, Verb: "say", Field: "text", Reason: "required"}, `invalid-app-payload: "say" field "text": required`},
		{ValidationError{Index: 0, Reason: `unknown verb "x"`}, `invalid-app-payload: verb[0]: unknown verb "x"`},
		{ValidationError{Index: -1, Reason: "want array of verbs, got object"}, `invalid-app-payload: want array of verbs, got object`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
