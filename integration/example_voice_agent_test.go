package integration

import (
	"strings"
	"testing"
)

// TestExampleVoiceAgent runs the worked example of examples/voice-agent: its app,
// on @jambonz/sdk, under `switchboard test` with its scenario folder. Every scenario
// passes. (The SDK comes from the tests' pinned install, the version the example's
// package.json names.)
func TestExampleVoiceAgent(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "../../../examples/voice-agent/app.js")
	code, stdout, stderr := runTestCmd(t, "--app", app.URL("ws", ""), "examples/voice-agent/scenarios")
	if code != 0 {
		t.Fatalf("switchboard test exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range []string{"weather", "order", "model-error", "no-key"} {
		if !strings.Contains(stdout, "ok") || !strings.Contains(stdout, name) {
			t.Errorf("no ok line for %s:\n%s", name, stdout)
		}
	}
}
