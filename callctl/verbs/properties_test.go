package verbs

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// documented lists, per verb, every property of the jambonz verb specification
// (@jambonz/verb-specifications specs.json, as installed with @jambonz/node-client-ws
// 0.2.x) with a valid sample value. Each must be accepted, alone on top of the verb's
// required properties.
var documented = map[string]map[string]string{
	"alert":  {"id": `"a1"`, "message": `"info=alert-internal"`},
	"answer": {"id": `"a1"`},
	"conference": {
		"id": `"c"`, "name": `"room"`, "beep": `true`, "memberTag": `"m"`, "speakOnlyTo": `"x"`,
		"startConferenceOnEnter": `true`, "endConferenceOnExit": `false`, "endConferenceDuration": `30`,
		"maxParticipants": `10`, "joinMuted": `true`, "actionHook": `"/a"`, "waitHook": `"/w"`,
		"statusEvents": `["start","end"]`, "statusHook": `{"url":"/s","method":"GET"}`, "enterHook": `"/e"`,
		"record": `{"path":"/r"}`, "distributeDtmf": `true`,
	},
	"config": {
		"id": `"c"`, "synthesizer": `{"vendor":"google"}`, "recognizer": `{"vendor":"google"}`,
		"bargeIn": `{"enable":true}`, "ttsStream": `{"enable":true}`, "record": `{"action":"startCallRecording"}`,
		"listen": `{"enable":true}`, "stream": `{"enable":false}`, "transcribe": `{"enable":true}`,
		"amd": `{"actionHook":"/amd"}`, "fillerNoise": `{"enable":true}`, "notifyEvents": `true`,
		"notifySttLatency": `true`, "reset": `["recognizer"]`, "onHoldMusic": `"http://m"`,
		"actionHookDelayAction": `{"enabled":true}`, "sipRequestWithinDialogHook": `"/sip"`,
		"boostAudioSignal": `"-6 dB"`, "vad": `{"enable":true}`, "referHook": `"/refer"`,
		"earlyMedia": `true`, "autoStreamTts": `false`, "disableTtsCache": `true`,
	},
	"dequeue": {"id": `"d"`, "name": `"q"`, "actionHook": `"/a"`, "timeout": `5`, "beep": `true`, "callSid": `"cs"`},
	"dial": {
		"id": `"d"`, "actionHook": `"/a"`, "onHoldHook": `"/h"`, "answerOnBridge": `true`, "callerId": `"+1"`,
		"callerName": `"n"`, "confirmHook": `"/c"`, "referHook": `"/r"`, "dialMusic": `"http://m"`,
		"dtmfCapture": `["*2"]`, "dtmfHook": `"/d"`, "headers": `{"X-A":"b"}`, "anchorMedia": `true`,
		"exitMediaPath": `true`, "boostAudioSignal": `3`, "listen": `{"url":"wss://l"}`, "stream": `{"url":"wss://s"}`,
		"target": `[{"type":"user","name":"bob"}]`, "timeLimit": `60`, "timeout": `20`, "proxy": `"sip:p"`,
		"transcribe": `{"transcriptionHook":"/t"}`, "amd": `{"actionHook":"/amd"}`,
		"dub": `[{"action":"addTrack","track":"music"}]`, "tag": `{"k":"v"}`, "forwardPAI": `true`,
	},
	"dtmf": {"id": `"d"`, "dtmf": `"123#"`, "duration": `250`},
	"dub": {
		"id": `"d"`, "action": `"playOnTrack"`, "track": `"t"`, "play": `"http://a.mp3"`,
		"say": `{"text":"hi"}`, "loop": `true`, "gain": `"-3 dB"`,
	},
	"enqueue": {"id": `"e"`, "name": `"q"`, "actionHook": `"/a"`, "waitHook": `"/w"`, "priority": `2`, "_": `{"x":1}`},
	"gather": {
		"id": `"g"`, "actionHook": `"/a"`, "finishOnKey": `"#"`, "input": `["speech"]`, "numDigits": `4`,
		"minDigits": `1`, "maxDigits": `6`, "interDigitTimeout": `2.5`, "partialResultHook": `"/p"`,
		"speechTimeout": `3`, "listenDuringPrompt": `true`, "dtmfBargein": `true`, "bargein": `true`,
		"minBargeinWordCount": `2`, "timeout": `10`, "recognizer": `{"vendor":"google"}`,
		"play": `{"url":"http://a.mp3"}`, "say": `{"text":"hi"}`, "fillerNoise": `{"enable":true}`,
		"actionHookDelayAction": `{"enabled":true}`,
	},
	"hangup": {"id": `"h"`, "headers": `{"X-Reason":"done"}`},
	"leave":  {"id": `"l"`},
	"listen": {
		"id": `"l"`, "actionHook": `"/a"`, "auth": `{"username":"u","password":"p"}`, "finishOnKey": `"#"`,
		"maxLength": `60`, "metadata": `{"a":1}`, "mixType": `"stereo"`, "passDtmf": `true`, "playBeep": `true`,
		"disableBidirectionalAudio": `true`, "bidirectionalAudio": `{"enabled":true}`, "sampleRate": `16000`,
		"timeout": `5`, "transcribe": `{"transcriptionHook":"/t"}`, "url": `"wss://x"`,
		"wsAuth": `{"username":"u","password":"p"}`, "earlyMedia": `true`, "channel": `1`,
	},
	"llm": {
		"id": `"l"`, "vendor": `"ultravox"`, "model": `"gpt"`, "auth": `{"apiKey":"k"}`, "connectOptions": `{"a":1}`,
		"mcpServers": `[{"url":"http://mcp"}]`, "actionHook": `"/a"`, "eventHook": `"/e"`, "toolHook": `"/t"`,
		"events": `["all"]`, "llmOptions": `{"messages":[]}`,
	},
	"s2s":            {"id": `"l"`, "vendor": `"ultravox"`, "auth": `{"apiKey":"k"}`, "toolHook": `"/t"`, "llmOptions": `{}`},
	"openai_s2s":     {"id": `"l"`, "model": `"gpt-4o-realtime"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{"response_create":{}}`},
	"microsoft_s2s":  {"id": `"l"`, "auth": `{"apiKey":"k"}`, "connectOptions": `{"host":"h"}`, "llmOptions": `{"response_create":{}}`},
	"google_s2s":     {"id": `"l"`, "eventHook": `"/e"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{"setup":{}}`},
	"elevenlabs_s2s": {"id": `"l"`, "events": `["all"]`, "auth": `{"agent_id":"a"}`, "llmOptions": `{}`},
	"deepgram_s2s":   {"id": `"l"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{"Settings":{"agent":{"think":{"provider":{"type":"open_ai","model":"gpt"}}}}}`},
	"voiceagent_s2s": {"id": `"l"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{"Settings":{"agent":{"think":{"provider":{"type":"open_ai","model":"gpt"}}}}}`},
	"ultravox_s2s":   {"id": `"l"`, "model": `"fixie-ai/ultravox"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{}`},
	"dialogflow": {
		"id": `"d"`, "credentials": `{"k":"v"}`, "project": `"p"`, "agent": `"a"`, "environment": `"e"`, "region": `"eu"`,
		"model": `"cx"`, "lang": `"en-US"`, "actionHook": `"/a"`, "eventHook": `"/e"`, "events": `["intent"]`,
		"welcomeEvent": `"welcome"`, "welcomeEventParams": `{"a":1}`, "noInputTimeout": `5`, "noInputEvent": `"ni"`,
		"passDtmfAsTextInput": `true`, "thinkingMusic": `"http://m"`, "tts": `{"vendor":"google"}`, "bargein": `true`,
		"queryInput": `{"text":"hi"}`,
	},
	"lex": {
		"id": `"l"`, "botId": `"b"`, "botAlias": `"a"`, "credentials": `{"accessKey":"k"}`, "region": `"us-east-1"`,
		"locale": `"en_US"`, "intent": `{"name":"i"}`, "welcomeMessage": `"hi"`, "metadata": `{"a":1}`, "bargein": `true`,
		"passDtmf": `true`, "actionHook": `"/a"`, "eventHook": `"/e"`, "noInputTimeout": `5`, "tts": `{"vendor":"aws"}`,
	},
	"rasa": {
		"id": `"r"`, "url": `"http://rasa"`, "recognizer": `{"vendor":"google"}`, "tts": `{"vendor":"google"}`,
		"prompt": `"hi"`, "actionHook": `"/a"`, "eventHook": `"/e"`,
	},
	"rest:dial": {
		"id": `"r"`, "account_sid": `"a"`, "application_sid": `"b"`, "call_hook": `"/c"`, "call_status_hook": `"/s"`,
		"from": `"+1"`, "callerName": `"n"`, "fromHost": `"h"`, "speech_synthesis_vendor": `"google"`,
		"speech_synthesis_voice": `"v"`, "speech_synthesis_language": `"en-US"`, "speech_recognizer_vendor": `"google"`,
		"speech_recognizer_language": `"en-US"`, "tag": `{"a":1}`, "to": `{"type":"phone","number":"+2"}`,
		"headers": `{"X-A":"b"}`, "timeout": `30`, "amd": `{"actionHook":"/amd"}`, "dual_streams": `true`,
		"sipRequestWithinDialogHook": `"/sip"`, "referHook": `"/refer"`, "timeLimit": `60`,
	},
	"message": {
		"id": `"m"`, "carrier": `"c"`, "account_sid": `"a"`, "message_sid": `"m"`, "to": `"+1"`, "from": `"+2"`,
		"text": `"hi"`, "media": `"http://img"`, "actionHook": `"/a"`,
	},
	"pause":    {"id": `"p"`, "length": `1.5`},
	"play":     {"id": `"p"`, "url": `["http://a","http://b"]`, "loop": `"forever"`, "earlyMedia": `true`, "seekOffset": `"8000"`, "timeoutSecs": `10`, "actionHook": `"/a"`},
	"redirect": {"id": `"r"`, "actionHook": `{"url":"/r","method":"post","username":"u","password":"p"}`},
	"say": {
		"id": `"s"`, "text": `"hi"`, "instructions": `"warm"`, "stream": `false`, "loop": `2`,
		"synthesizer": `{"vendor":"google"}`, "earlyMedia": `true`, "disableTtsCache": `true`, "closeStreamOnEmpty": `true`,
	},
	"sip:decline": {"id": `"s"`, "status": `486`, "reason": `"Busy"`, "headers": `{"Retry-After":60}`},
	"sip:refer":   {"id": `"s"`, "referTo": `"sip:x"`, "referredBy": `"sip:y"`, "referredByDisplayName": `"Y"`, "headers": `{}`, "actionHook": `"/a"`, "eventHook": `"/e"`},
	"sip:request": {"id": `"s"`, "method": `"INFO"`, "body": `"b"`, "headers": `{"Content-Type":"text/plain"}`, "actionHook": `"/a"`},
	"stream":      {"id": `"s"`, "url": `"wss://x"`, "mixType": `"mono"`},
	"tag":         {"id": `"t"`, "data": `{"k":"v"}`},
	"transcribe":  {"id": `"t"`, "transcriptionHook": `"/t"`, "translationHook": `"/tr"`, "recognizer": `{"vendor":"google"}`, "earlyMedia": `true`, "channel": `2`},
}

// required lists the required properties of each verb with a valid value; the minimal
// valid verb is exactly these.
var required = map[string]map[string]string{
	"alert":          {"message": `"info=alert-internal"`},
	"conference":     {"name": `"room"`},
	"dequeue":        {"name": `"q"`},
	"dial":           {"target": `[{"type":"phone","number":"+15551234567"}]`},
	"dtmf":           {"dtmf": `"1"`},
	"dub":            {"action": `"addTrack"`, "track": `"t"`},
	"enqueue":        {"name": `"q"`},
	"listen":         {"url": `"wss://x"`},
	"stream":         {"url": `"wss://x"`},
	"llm":            {"vendor": `"ultravox"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{}`},
	"s2s":            {"vendor": `"ultravox"`, "auth": `{"apiKey":"k"}`, "llmOptions": `{}`},
	"openai_s2s":     {"auth": `{"apiKey":"k"}`, "llmOptions": `{"response_create":{}}`},
	"microsoft_s2s":  {"auth": `{"apiKey":"k"}`, "connectOptions": `{"host":"h"}`, "llmOptions": `{"response_create":{}}`},
	"google_s2s":     {"auth": `{"apiKey":"k"}`, "llmOptions": `{"setup":{}}`},
	"elevenlabs_s2s": {"auth": `{"agent_id":"a"}`, "llmOptions": `{}`},
	"deepgram_s2s":   {"auth": `{"apiKey":"k"}`, "llmOptions": `{"Settings":{"agent":{"think":{"provider":{"type":"open_ai","model":"gpt"}}}}}`},
	"voiceagent_s2s": {"auth": `{"apiKey":"k"}`, "llmOptions": `{"Settings":{"agent":{"think":{"provider":{"type":"open_ai","model":"gpt"}}}}}`},
	"ultravox_s2s":   {"auth": `{"apiKey":"k"}`, "llmOptions": `{}`},
	"dialogflow":     {"credentials": `"{}"`, "project": `"p"`, "lang": `"en-US"`},
	"lex":            {"botId": `"b"`, "botAlias": `"a"`, "credentials": `{}`, "region": `"us-east-1"`},
	"rasa":           {"url": `"http://rasa"`},
	"rest:dial":      {"call_hook": `"/c"`, "from": `"+1"`, "to": `{"type":"phone","number":"+2"}`},
	"message":        {"to": `"+1"`, "from": `"+2"`},
	"pause":          {"length": `2`},
	"play":           {"url": `"http://a.mp3"`},
	"redirect":       {"actionHook": `"/next"`},
	"say":            {"text": `"hello"`},
	"sip:decline":    {"status": `603`},
	"sip:refer":      {"referTo": `"sip:x@y"`},
	"sip:request":    {"method": `"INFO"`},
	"tag":            {"data": `{"a":1}`},
}

// object renders props (plus extra) as a JSON object with sorted keys.
func object(t testing.TB, props map[string]string, extra map[string]string) string {
	t.Helper()
	m := map[string]json.RawMessage{}
	for k, v := range props {
		m[k] = json.RawMessage(v)
	}
	for k, v := range extra {
		m[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("bad test JSON %v: %v", m, err)
	}
	return string(b)
}

// flat renders the {"verb":name,...} shape, nested the {name:{...}} shape.
func flat(t testing.TB, name string, props map[string]string) string {
	return object(t, props, map[string]string{"verb": mustJSON(t, name)})
}

func nested(t testing.TB, name string, props map[string]string) string {
	return `{` + mustJSON(t, name) + `:` + object(t, props, nil) + `}`
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNamesAreSection8 pins the accepted verbs to docs/call-control.md §8: jambonz
// 0.9.8's (lib/tasks/make_task.js) and verb-specifications 0.1.13's shortcuts.
func TestNamesAreSection8(t *testing.T) {
	want := []string{"alert", "answer", "conference", "config", "deepgram_s2s", "dequeue", "dial", "dialogflow",
		"dtmf", "dub", "elevenlabs_s2s", "enqueue", "gather", "google_s2s", "hangup", "leave", "lex", "listen", "llm",
		"message", "microsoft_s2s", "openai_s2s", "pause", "play", "rasa", "redirect", "rest:dial", "s2s", "say",
		"sip:decline", "sip:refer", "sip:request", "stream", "tag", "transcribe", "ultravox_s2s", "voiceagent_s2s"}
	got := Names()
	if len(got) != len(want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Names() = %v, want %v", got, want)
		}
		if !Known(want[i]) {
			t.Errorf("Known(%q) = false", want[i])
		}
	}
	for _, name := range []string{"", "Say", "pipeline", "verb", "qwen_s2s", "agent", "sip:notify"} {
		if Known(name) {
			t.Errorf("Known(%q) = true", name)
		}
	}
}

func TestEveryVerbHasATableRow(t *testing.T) {
	for _, name := range Names() {
		if _, ok := documented[name]; !ok {
			t.Errorf("verb %q has no row in documented", name)
		}
	}
	if len(documented) != len(Names()) {
		t.Errorf("documented has %d verbs, package accepts %d", len(documented), len(Names()))
	}
}

func TestDecodeAcceptsEveryDocumentedProperty(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		for _, prop := range slices.Sorted(maps.Keys(documented[name])) {
			t.Run(name+"/"+prop, func(t *testing.T) {
				props := map[string]string{}
				for k, v := range required[name] {
					props[k] = v
				}
				props[prop] = documented[name][prop]
				for _, doc := range []string{flat(t, name, props), nested(t, name, props)} {
					if _, err := Decode([]byte("[" + doc + "]")); err != nil {
						t.Errorf("Decode(%s): %v", doc, err)
					}
				}
			})
		}
		t.Run(name+"/all", func(t *testing.T) {
			doc := flat(t, name, documented[name])
			vs, err := Decode([]byte("[" + doc + "]"))
			if err != nil {
				t.Fatalf("Decode(%s): %v", doc, err)
			}
			if got := vs[0].ID(); got == "" {
				t.Errorf("ID() = %q, want the id property", got)
			}
		})
	}
}
