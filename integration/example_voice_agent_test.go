package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// voiceAgentScenarios are the scenarios of examples/voice-agent/scenarios.
var voiceAgentScenarios = []string{"model-error", "no-key", "order", "weather"}

// ackTolerantEnv gives the Node agent a minute to ack session:new instead of
// jambonz's 5 s: on a loaded machine a Node app started moments ago, answering
// several calls at once, can take longer (no scenario here means an ack to time
// out), as loadTolerantEnv does for the handshake.
var ackTolerantEnv = []string{"JAMBONES_WS_API_MSG_RESPONSE_TIMEOUT=60000"}

// wantAllOK fails the test unless stdout has an ok line for each scenario and the
// summary of them all.
func wantAllOK(t *testing.T, code int, stdout, stderr string, names []string) {
	t.Helper()
	for _, name := range names {
		if !strings.Contains(stdout, "ok    "+name+" ") {
			t.Errorf("no ok line for %s", name)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("switchboard test exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestExampleVoiceAgent runs the worked example of examples/voice-agent: its app,
// on @jambonz/sdk, under `switchboard test` with its scenario folder. Every scenario
// passes. (The SDK comes from the tests' pinned install, the version the example's
// package.json names.)
func TestExampleVoiceAgent(t *testing.T) {
	t.Parallel()
	app := startNodeApp(t, "../../../examples/voice-agent/app.js")
	code, stdout, stderr := sbTest(t, "..", ackTolerantEnv, "--no-start", "--app", app.URL("ws", ""), "examples/voice-agent/scenarios")
	wantAllOK(t, code, stdout, stderr, voiceAgentScenarios)
}

// The example's one command, as its README and docs/testing.md §6 give it: in a copy
// of examples/voice-agent with the SDK installed, `switchboard test scenarios` starts
// the agent (its folder's start:), runs every scenario twice (--count) against it
// and stops it.
func TestExampleVoiceAgentOneCommand(t *testing.T) {
	t.Parallel()
	node, modules := requireNodeSDKs(t)
	example := filepath.Join(t.TempDir(), "voice-agent")
	if err := os.CopyFS(example, os.DirFS(filepath.Join("..", "examples", "voice-agent"))); err != nil {
		t.Fatal(err)
	}
	// npm install's node_modules, from the tests' pinned install.
	if err := os.Symlink(modules, filepath.Join(example, "node_modules")); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin"}, ackTolerantEnv...)
	code, stdout, stderr := sbTestIsolated(t, example, env, "--count", "2", "--pass-rate", "0.5", "scenarios")
	wantAllOK(t, code, stdout, stderr, voiceAgentScenarios)
	if !strings.Contains(stdout, "(2/2 runs passed, need 1)") {
		t.Fatalf("--count 2 --pass-rate 0.5:\n%s", stdout)
	}
}
