package verbs_test

import (
	"testing"

	"github.com/switchboard-voice/switchboard/callctl/verbs"
)

// Properties of jambonz's verb schema found missing by black-box testing.
func TestSchemaAdditions(t *testing.T) {
	for _, payload := range []string{
		`[{"verb":"redirect","actionHook":"/next","statusHook":"/status"}]`,
		`[{"verb":"redirect","actionHook":"/next","statusHook":{"url":"/status","method":"GET"}}]`,
		`[{"verb":"dial","target":[{"type":"phone","number":"+15550100"}],"codecs":["PCMU","PCMA"]}]`,
		`[{"verb":"config","trackTtsPlayout":true,"noiseIsolation":{"enable":true},"turnTaking":{"vendor":"x"}}]`,
		`[{"verb":"transcribe","enable":false}]`,
		`[{"verb":"conference","name":"room","listen":{"url":"wss://x/y"}}]`,
	} {
		if _, err := verbs.Decode([]byte(payload)); err != nil {
			t.Errorf("%s: %v", payload, err)
		}
	}
	if _, err := verbs.Decode([]byte(`[{"verb":"redirect","actionHook":"/next","statusHook":5}]`)); err == nil {
		t.Error("a numeric statusHook must be refused")
	}
}
