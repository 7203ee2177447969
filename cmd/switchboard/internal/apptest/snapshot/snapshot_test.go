package snapshot_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/snapshot"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call is a finished call whose payloads hold volatile values at every depth.
func call(digits string) *callctl.Result {
	return &callctl.Result{
		Status: callctl.StatusCompleted, Reason: callctl.ReasonAppHangup, Verbs: []string{"say", "gather", "hangup"},
		Hooks: []string{"/call", "/gather"}, Alerts: []callctl.Alert{{Type: callctl.AlertWebhookFailure, Detail: "at 127.0.0.1:41234"}},
		Compat: []callctl.Compat{
			{Rule: callctl.CompatGatherDigitsLost, Detail: "the caller keyed 12 but the gather timed out"},
			{Rule: callctl.CompatActionHookNotVerbs, Detail: "http://127.0.0.1:41234/gather answered text/html"},
		},
		Requests: []callctl.Request{
			{Transport: "http", Hook: "/call", Method: "POST", Payload: map[string]any{
				"call_sid": "0f3c1e52-5b7e-4c1a-9a51-2d6f7e8a9b0c", "account_sid": "acct", "from": "+1555", "duration": 3,
				"sbc_callid": "x@y", "fs_sip_address": "10.0.0.1:5060",
				"customerData": map[string]any{"session": "0f3c1e52-5b7e-4c1a-9a51-2d6f7e8a9b0c", "at": "2026-12-04T16:16:22.558Z", "n": 1},
			}},
			{Transport: "http", Hook: "/gather", Method: "POST", Payload: map[string]any{"digits": digits, "reason": "dtmfDetected",
				"speech": map[string]any{"alternatives": []any{map[string]any{"transcript": "hi", "confidence": 0.9}}}}},
			{Transport: "websocket", Type: "call:status", Payload: map[string]any{"call_status": "completed"}},
		},
	}
}

// Record keeps the chosen fields, masks what changes from call to call by rule and
// what the scenario masks, and records every field with "*"; of the alerts and the
// compat warnings, their types and rules (their details name the app's address).
func TestRecord(t *testing.T) {
	c := snapshot.Record(call("1"), scenario.SnapshotSpec{Payload: []string{"digits", "speech.alternatives[0].transcript", "call_sid", "absent"}})
	got := snapshot.Text(c)
	want := `status: completed
reason: hangup-verb
verbs:
  - say
  - gather
  - hangup
hooks:
  - /call
  - /gather
requests:
  - hook: /call
    method: POST
    payload:
      call_sid: <id>
  - hook: /gather
    method: POST
    payload:
      digits: "1"
      speech.alternatives[0].transcript: hi
  - type: call:status
alerts:
  - webhook-failure
compat:
  - gather-digits-lost
  - action-hook-not-verbs
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	all := snapshot.Text(snapshot.Record(call("1"), scenario.SnapshotSpec{Payload: []string{"*"}, Mask: []string{"from", "customerData.n"}}))
	for _, line := range []string{"call_sid: <id>", "account_sid: <id>", "sbc_callid: <id>", "fs_sip_address: <address>", "from: <masked>",
		"duration: 3", "session: <id>", "at: <timestamp>", `"n": <masked>`, "call_status: completed", "confidence: 0.9"} {
		if !strings.Contains(all, " "+line+"\n") {
			t.Errorf("with *: no line %q in\n%s", line, all)
		}
	}
}

// A snapshot written and read back is the call recorded; another call shows as a
// unified diff of the lines that changed.
func TestFileAndDiff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ivr.snap.yaml")
	f, err := snapshot.Read(path)
	if err != nil || f.Exists() || len(f.Entries) != 0 {
		t.Fatalf("a missing file: %+v, %v", f, err)
	}
	spec := scenario.SnapshotSpec{Payload: []string{"digits", "duration"}}
	f.Entries["ivr/sales"] = snapshot.Record(call("1"), spec)
	f.Entries["gone"] = snapshot.Record(call("9"), spec)
	if wrote, err := f.Write("ivr.yaml", []string{"ivr/sales", "ivr/support"}); err != nil || !wrote {
		t.Fatalf("write: %v, %v", wrote, err)
	}
	before, _ := os.Stat(path)
	// The same entries again: the file is left as it is.
	if wrote, err := f.Write("ivr.yaml", []string{"ivr/sales", "ivr/support"}); err != nil || wrote {
		t.Fatalf("write again: %v, %v", wrote, err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the file was written again")
	}
	back, err := snapshot.Read(path)
	if err != nil || len(back.Entries) != 1 {
		t.Fatalf("read back: %+v, %v", back, err)
	}
	if d := back.DiffIn("ivr/sales", snapshot.Record(call("1"), spec)); d != "" {
		t.Fatalf("the same call differs:\n%s", d)
	}
	raw, _ := os.ReadFile(path)
	// The hunk is numbered with the file's lines and headed with the request it is
	// in: the digits line is the file's.
	d := back.DiffIn("ivr/sales", snapshot.Record(call("2"), spec))
	digitsLine := slices.Index(strings.Split(string(raw), "\n"), `        digits: "1"`) + 1
	header := fmt.Sprintf("@@ -%d,7 +%d,7 @@ requests[1] hook: /gather\n", digitsLine-3, digitsLine-3)
	if !strings.HasPrefix(d, "--- "+path+"\n+++ this call\n"+header) || !strings.Contains(d, "\n-      digits: \"1\"\n+      digits: \"2\"\n") {
		t.Fatalf("diff (want the hunk %q):\n%s\nof\n%s", header, d, raw)
	}
	if !strings.HasPrefix(string(raw), "# Snapshots of ivr.yaml") || strings.Contains(string(raw), "gone") {
		t.Fatalf("file:\n%s", raw)
	}
	if err := os.WriteFile(path, []byte("x:\n  status: completed\n  colour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = snapshot.Read(path)
	var se *snapshot.Error
	if !errors.As(err, &se) || se.Line != 3 || se.Path != path {
		t.Fatalf("a bad file: %v", err)
	}
}
