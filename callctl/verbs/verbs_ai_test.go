package verbs

import (
	"strings"
	"testing"
)

// TestShortcutsNormalise: s2s and the vendor shortcuts decode as llm with the vendor
// filled in, a vendor of the verb's own winning, as verb-specifications 0.1.13's
// normalizeJambones does ({...properties, ...data}).
func TestShortcutsNormalise(t *testing.T) {
	for _, tc := range []struct{ doc, vendor string }{
		{`{"verb":"openai_s2s","auth":{"apiKey":"k"},"llmOptions":{"response_create":{}}}`, "openai"},
		{`{"ultravox_s2s":{"auth":{"apiKey":"k"},"llmOptions":{}}}`, "ultravox"},
		{`{"verb":"deepgram_s2s","vendor":"ultravox","auth":{"apiKey":"k"},"llmOptions":{}}`, "ultravox"},
		{`{"verb":"s2s","vendor":"google","auth":{"apiKey":"k"},"llmOptions":{"setup":{}}}`, "google"},
	} {
		vs, err := Decode([]byte("[" + tc.doc + "]"))
		if err != nil {
			t.Fatalf("Decode(%s): %v", tc.doc, err)
		}
		llm, ok := vs[0].(*Llm)
		if !ok || llm.Name() != "llm" || llm.Vendor != tc.vendor {
			t.Errorf("Decode(%s) = %#v, want an llm of vendor %s", tc.doc, vs[0], tc.vendor)
		}
	}
	if Canonical("voiceagent_s2s") != "llm" || Canonical("stream") != "listen" || Canonical("say") != "say" {
		t.Error("Canonical does not map the shortcuts")
	}
}

// TestLlmVendorRules: what jambonz's vendor tasks require when they are built
// refuses the verbs, as jambonz refuses them (lib/tasks/llm/llms/*.js).
func TestLlmVendorRules(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{`{"verb":"s2s","llmOptions":{}}`, "vendor"},
		{`{"verb":"llm","vendor":"qwen","llmOptions":{}}`, "vendor"},
		{`{"verb":"openai_s2s","auth":{},"llmOptions":{"response_create":{}}}`, "auth.apiKey"},
		{`{"verb":"openai_s2s","auth":{"apiKey":""},"llmOptions":{"response_create":{}}}`, "auth.apiKey"},
		{`{"verb":"openai_s2s","auth":{"apiKey":"k"},"llmOptions":{"messages":[]}}`, "llmOptions.response_create"},
		{`{"verb":"microsoft_s2s","auth":{"apiKey":"k"},"llmOptions":{"response_create":{}}}`, "connectOptions.host"},
		{`{"verb":"google_s2s","auth":{"apiKey":"k"},"llmOptions":{}}`, "llmOptions.setup"},
		{`{"verb":"elevenlabs_s2s","auth":{"apiKey":"k"},"llmOptions":{}}`, "auth.agent_id"},
		{`{"verb":"deepgram_s2s","auth":{"apiKey":"k"},"llmOptions":{"Settings":{"agent":{"think":{"provider":{"model":"m"}}}}}}`, "llmOptions.Settings.agent.think.provider.type"},
		{`{"verb":"ultravox_s2s","auth":{"agent_id":"a"},"llmOptions":{}}`, "auth.apiKey"},
	} {
		_, err := Decode([]byte("[" + tc.doc + "]"))
		if err == nil || !strings.Contains(err.Error(), `field "`+tc.field+`"`) {
			t.Errorf("Decode(%s) = %v, want an error on %s", tc.doc, err, tc.field)
		}
	}
	// A name jambonz 0.9.8 does not know stays an unknown verb (@jambonz/sdk 0.10 has
	// qwen_s2s; verb-specifications 0.1.13 does not).
	if _, err := Decode([]byte(`[{"verb":"qwen_s2s","llmOptions":{}}]`)); err == nil || !strings.Contains(err.Error(), `unknown verb "qwen_s2s"`) {
		t.Errorf("qwen_s2s: %v, want unknown verb", err)
	}
}

// TestNestedHooksAndForms: the forms jambonz accepts and the ones its spec refuses.
func TestNestedHooksAndForms(t *testing.T) {
	vs, err := Decode([]byte(`[{"verb":"config","bargeIn":{"enable":true,"sticky":true,"actionHook":"/speech","input":["speech"]},
		"ttsStream":{"enable":true},"transcribe":{"enable":true,"transcriptionHook":"/t"}},
		{"verb":"dial","target":[{"type":"phone","number":"+1"}],"dtmfCapture":{"childCall":["*2"],"parentCall":["*3"]},
		 "amd":{"actionHook":"/amd","thresholdWordCount":5}},
		{"verb":"conference","name":"c","startConferenceOnEnter":false},{"verb":"conference","name":"d"}]`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := vs[0].(*Config)
	if cfg.BargeIn == nil || !cfg.BargeIn.Sticky || cfg.BargeIn.ActionHook.URL != "/speech" || cfg.TtsStream == nil || !cfg.TtsStream.Enable ||
		cfg.Transcribe.TranscriptionHook.URL != "/t" {
		t.Errorf("config = %#v", cfg)
	}
	dial := vs[1].(*Dial)
	if _, ok := dial.DtmfCapture.(map[string]any); !ok || dial.Amd.ActionHook.URL != "/amd" || dial.Amd.ThresholdWordCount != 5 {
		t.Errorf("dial = %#v", dial)
	}
	if c := vs[2].(*Conference); c.StartConferenceOnEnter == nil || *c.StartConferenceOnEnter {
		t.Errorf("startConferenceOnEnter false decoded as %v", c.StartConferenceOnEnter)
	}
	if c := vs[3].(*Conference); c.StartConferenceOnEnter != nil {
		t.Errorf("absent startConferenceOnEnter decoded as %v", *c.StartConferenceOnEnter)
	}
	enc, err := Encode(vs)
	if err != nil || !strings.Contains(string(enc), `"startConferenceOnEnter":false`) {
		t.Errorf("Encode = %s, %v: want startConferenceOnEnter false kept", enc, err)
	}
	for _, doc := range []string{
		`{"verb":"transcribe","transcriptionHook":{"url":"/t"}}`,             // spec: "string"
		`{"verb":"config","bargeIn":{"sticky":true}}`,                        // bargeIn.enable required
		`{"verb":"dial","target":[{"type":"phone","number":"+1"}],"amd":{}}`, // amd.actionHook required
		`{"verb":"dial","target":[{"type":"phone","number":"+1"}],"dtmfCapture":"*2"}`,
	} {
		if _, err := Decode([]byte("[" + doc + "]")); err == nil {
			t.Errorf("Decode(%s) accepted", doc)
		}
	}
}
