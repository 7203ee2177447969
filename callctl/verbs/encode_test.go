package verbs

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEncodeRoundTrip decodes every verb with all its documented properties, encodes
// it, and decodes the result again: the values must be equal and the encoding must be
// in the {"verb":...} shape.
func TestEncodeRoundTrip(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(documented)) {
		t.Run(name, func(t *testing.T) {
			doc := "[" + nested(t, name, documented[name]) + "]"
			first, err := Decode([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			enc, err := Encode(first)
			if err != nil {
				t.Fatal(err)
			}
			second, err := Decode(enc)
			if err != nil {
				t.Fatalf("re-decode of %s: %v", enc, err)
			}
			if !reflect.DeepEqual(first, second) {
				t.Errorf("round trip changed the verb:\n first %#v\nsecond %#v\n   via %s", first[0], second[0], enc)
			}
			var shape []map[string]any
			if err := json.Unmarshal(enc, &shape); err != nil {
				t.Fatal(err)
			}
			if shape[0]["verb"] != first[0].Name() {
				t.Errorf("encoded verb key = %v, want %q", shape[0]["verb"], first[0].Name())
			}
			// Every documented property survives; false booleans are omitted because
			// false is what an absent boolean means.
			for prop, val := range documented[name] {
				if _, ok := shape[0][prop]; !ok && val != "false" {
					t.Errorf("property %q lost in %s", prop, enc)
				}
			}
		})
	}
}

func TestEncodeDetails(t *testing.T) {
	vs := []Verb{
		&Say{Text: []string{"<b> & </b>"}, Loop: LoopForever},
		&Pause{Length: 0},
		&Redirect{ActionHook: &Hook{URL: "/r"}},
		&Redirect{ActionHook: &Hook{URL: "/r", Method: "GET"}},
	}
	enc, err := Encode(vs)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"verb":"say","text":["<b> & </b>"],"loop":"forever"},{"verb":"pause","length":0},` +
		`{"verb":"redirect","actionHook":"/r"},{"verb":"redirect","actionHook":{"url":"/r","method":"GET"}}]`
	if string(enc) != want {
		t.Errorf("Encode =\n%s\nwant\n%s", enc, want)
	}
	one, err := EncodeOne(vs[1])
	if err != nil || string(one) != `{"verb":"pause","length":0}` {
		t.Errorf("EncodeOne = %s, %v", one, err)
	}
	if _, err := Encode([]Verb{nil}); err == nil || !strings.Contains(err.Error(), "nil verb") {
		t.Errorf("Encode(nil verb) = %v", err)
	}
	if _, err := EncodeOne((*Say)(nil)); err == nil {
		t.Error("EncodeOne((*Say)(nil)) succeeded")
	}
	if _, err := EncodeOne(foreignVerb{}); err == nil {
		t.Error("EncodeOne(foreign type) succeeded")
	}
}

type foreignVerb struct{}

func (foreignVerb) Name() string            { return "say" }
func (foreignVerb) ID() string              { return "" }
func (foreignVerb) Hooks() map[string]*Hook { return nil }

// TestDecodeDoesNotAliasInput: the caller may reuse its read buffer (a WebSocket frame,
// an HTTP body) once Decode returns, so decoded verbs must not point into it.
func TestDecodeDoesNotAliasInput(t *testing.T) {
	buf := append([]byte(nil), typicalPayload...)
	vs, err := Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	before, err := Encode(vs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x'
	}
	after, err := Encode(vs)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("verbs changed when the input buffer was overwritten:\n%s\n%s", before, after)
	}
}
