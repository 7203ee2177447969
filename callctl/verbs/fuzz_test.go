package verbs

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and DecodeOne. Neither may panic; every
// error must be a *ValidationError wrapping ErrInvalidPayload; and whatever decodes
// must encode, decode again to equal values, and encode to the same bytes.
func FuzzDecode(f *testing.F) {
	seeds := []string{
		`[]`, `{}`, `[{}]`, `null`, `[null]`, `"x"`, `[[[[[]]]]]`,
		`[{"verb":"say","text":"hi","loop":"forever"},{"gather":{"input":["digits"],"actionHook":"/g","say":{"text":"x"}}}]`,
		`[{"verb":"dial","target":[{"type":"phone","number":"1"}],"headers":{"X":1},"dub":[{"action":"addTrack","track":"t"}]}]`,
		`[{"verb":"redirect","actionHook":{"url":"/r","method":"get"}}]`,
		`[{"verb":"play","url":["a","b"],"timeoutSecs":"1.5","seekOffset":2}]`,
		`[{"stream":{"url":"wss://x","metadata":{"a":[1,{"b":null}]}}}]`,
		`[{"verb":"gather","numDigits":1e300}]`,
		`[{"verb":"sip:decline","status":486,"headers":{"A":true}}]`,
		`[{"verb":"tag","data":{"\u003c":"\u00ff"}}]`,
		`[{"verb":"llm","vendor":"v","llmOptions":{},"mcpServers":[{"url":"u"}]}]`,
		"[{\"verb\":\"say\",\"text\":\"\xff\xfe\"}]",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(err error) {
			if err == nil {
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidPayload) {
				t.Fatalf("error %v (%T) is not a ValidationError wrapping ErrInvalidPayload", err, err)
			}
			if ve.Reason == "" {
				t.Fatalf("error %+v has no reason", ve)
			}
		}
		if v, err := DecodeOne(data); err != nil {
			check(err)
		} else if _, err := EncodeOne(v); err != nil {
			t.Fatalf("EncodeOne(%#v): %v", v, err)
		}
		vs, err := Decode(data)
		if err != nil {
			check(err)
			return
		}
		enc, err := Encode(vs)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode of %s (from %q): %v", enc, data, err)
		}
		if !reflect.DeepEqual(vs, again) {
			t.Fatalf("round trip changed verbs:\n%#v\n%#v\nvia %s", vs, again, enc)
		}
		enc2, err := Encode(again)
		if err != nil || string(enc2) != string(enc) {
			t.Fatalf("encoding is not stable:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}

// FuzzSplit checks the splitters against encoding/json on every valid document: the
// same members (last duplicate wins) and the same elements.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":1,"b":[1,{"c":"]"}],"a":"x\"y"}`, `[1, "a", {"b":[]}, null, true]`, ` { "k" : { } } `, `{"\u0061":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) == nil && m != nil {
			members, ok := splitObject(data)
			if !ok {
				t.Fatalf("splitObject(%q) failed on a valid object", data)
			}
			if len(members) != len(m) {
				t.Fatalf("splitObject(%q) = %d members, want %d", data, len(members), len(m))
			}
			for _, mb := range members {
				if !bytes.Equal(mb.val, bytes.TrimSpace(m[mb.key])) {
					t.Fatalf("member %q = %q, want %q", mb.key, mb.val, m[mb.key])
				}
			}
		}
		var a []json.RawMessage
		if json.Unmarshal(data, &a) == nil && a != nil {
			elems, ok := splitArray(data)
			if !ok || len(elems) != len(a) {
				t.Fatalf("splitArray(%q) = %d elements (%v), want %d", data, len(elems), ok, len(a))
			}
			for i := range a {
				if !bytes.Equal(elems[i], bytes.TrimSpace(a[i])) {
					t.Fatalf("element %d = %q, want %q", i, elems[i], a[i])
				}
			}
		}
	})
}
