package callctl

import (
	"reflect"
	"testing"
)

// snakeCase spells keys as the npm package to-snake-case 1.0.0 does, the one
// jambonz's lib/utils/snakecase-keys.js uses: the expected values were printed by
// require('to-snake-case') under Node.
func TestSnakeCaseMatchesToSnakeCase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"_customerData", "customerdata"},
		{"callSID", "call_s_i_d"},
		{"HTTPServer", "h_t_t_p_server"},
		{"ABc", "a_bc"},
		{"user_transcriptEvent", "user_transcriptevent"},
		{"a1B", "a1b"},
		{"café", "caf"},
		{"aİb", "ai_b"},
		{"X-Custom", "x_custom"},
		{"toolName", "tool_name"},
		{"event_id", "event_id"},
		{"__proto", "proto"},
		{"foo.barBaz", "foo_barbaz"},
		{"foo bar", "foo_bar"},
		{"fooBar Baz", "foobar_baz"},
		{"ABC", "abc"},
		{"hasRecording", "has_recording"},
		{"sipHeaders", "sip_headers"},
		{"a:b", "a_b"},
		{"x$y", "x_y"},
		{"Abc", "abc"},
		{"aBCd", "a_b_cd"},
		{"1A", "1a"},
		{"é", ""},
		{"", ""},
		{"-", ""},
		{"\u212a", "k"},
		{"speechEvent", "speech_event"},
		{"stt.latency", "stt_latency"},
		{"invocationId", "invocation_id"},
		{"clientToolResult", "client_tool_result"},
		{"response.audio_transcript.done", "response_audio_transcript_done"},
		{"aB\u00a0c", "ab_c"},
		{"fooBARBaz", "foo_b_a_r_baz"},
		{"zÉb", "z_b"},
		{"a\u2003B", "a_b"},
		{"a__b", "a_b"},
		{"call_sid", "call_sid"},
		{"_x", "x"},
		{"x_", "x"},
		{"9lives", "9lives"},
	} {
		if got := snakeCase(tc.in); got != tc.want {
			t.Errorf("snakeCase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// customerData, sip, env_vars and args keep their values verbatim at any depth;
// everything else is snake_cased, inside arrays too.
func TestWirePayloadKeepsJambonzKeys(t *testing.T) {
	in := map[string]any{
		"callSid":      "x",
		"customerData": map[string]any{"orderId": 1},
		"sip":          map[string]any{"headers": map[string]any{"X-Foo": "1"}},
		"env_vars":     map[string]any{"apiKey": "k"},
		"nested":       []any{map[string]any{"toolName": "t", "args": map[string]any{"cityName": "Paris"}}},
	}
	want := map[string]any{
		"call_sid":     "x",
		"customerData": map[string]any{"orderId": 1},
		"sip":          map[string]any{"headers": map[string]any{"X-Foo": "1"}},
		"env_vars":     map[string]any{"apiKey": "k"},
		"nested":       []any{map[string]any{"tool_name": "t", "args": map[string]any{"cityName": "Paris"}}},
	}
	if got := wirePayload(in); !reflect.DeepEqual(got, want) {
		t.Errorf("wirePayload = %v, want %v", got, want)
	}
}

// snakeCase's shortcut (isSnake) only skips keys to-snake-case leaves as they are.
func FuzzSnakeCaseShortcut(f *testing.F) {
	for _, s := range []string{"call_sid", "a__b", "_x", "x_", "9lives", "sip_status", "a_1_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isSnake(s) && toSnakeCase(s) != s {
			t.Fatalf("isSnake(%q) but to-snake-case spells it %q", s, toSnakeCase(s))
		}
	})
}
