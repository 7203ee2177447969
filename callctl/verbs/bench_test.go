package verbs

import (
	"encoding/json"
	"testing"
)

// typicalPayload is what an IVR answers to its call hook: five verbs, both shapes.
var typicalPayload = []byte(`[
  {"verb":"config","synthesizer":{"vendor":"google","language":"en-US","voice":"en-US-Wavenet-C"},"recognizer":{"vendor":"google","language":"en-US"}},
  {"verb":"say","text":"Welcome to Acme. Your call may be recorded.","synthesizer":{"vendor":"google","language":"en-US"}},
  {"gather":{"input":["digits","speech"],"actionHook":{"url":"/menu","method":"POST"},"numDigits":1,"timeout":8,
    "say":{"text":"Press 1 for sales or 2 for support, or just say what you need."}}},
  {"verb":"dial","actionHook":"/dial-status","callerId":"+15550001111","target":[{"type":"phone","number":"+15552223333"}],
    "headers":{"X-Queue":"sales"},"timeout":20},
  {"verb":"hangup"}
]`)

// BenchmarkDecode measures Decode (parse and validate) on a typical payload.
func BenchmarkDecode(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalPayload)))
	for b.Loop() {
		if _, err := Decode(typicalPayload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBaseline is the floor Decode is compared with: encoding/json into
// generic maps, with no validation at all.
func BenchmarkDecodeBaseline(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(typicalPayload)))
	for b.Loop() {
		var v []map[string]any
		if err := json.Unmarshal(typicalPayload, &v); err != nil {
			b.Fatal(err)
		}
	}
}
