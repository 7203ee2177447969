package jsjson

import (
	"encoding/json"
	"testing"
)

// benchPayload is the shape of a hook body: a call's fields and a gather's result.
var benchPayload = map[string]any{
	"call_sid": "3b8a7f2c-1d2e-4f5a-9b8c-7d6e5f4a3b2c", "direction": "inbound", "from": "+15551230000",
	"to": "+15559870000", "call_id": "a1b2c3d4e5f6@10.0.0.1", "sbc_callid": "f6e5d4c3b2a1", "sip_status": 200,
	"sip_reason": "OK", "call_status": "in-progress", "caller_id": "+15551230000", "account_sid": "acct",
	"trace_id": "0123456789abcdef", "application_sid": "app", "fs_sip_address": "10.0.0.2:5060",
	"customerData": map[string]any{"order": "R&D <ops>", "n": 42.5}, "reason": "speechDetected",
	"speech": map[string]any{"language_code": "en-US", "is_final": true,
		"alternatives": []any{map[string]any{"transcript": "I would like to speak to sales", "confidence": 0.92}}},
}

// BenchmarkMarshal: jsjson.Marshal beside encoding/json's Marshal of the same hook
// body, run as sub-benchmarks of one run so that their ratio is what to read.
func BenchmarkMarshal(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(benchPayload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(benchPayload); err != nil {
				b.Fatal(err)
			}
		}
	})
}
