package jsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestStringifyMatchesNode: every case of testdata/stringify.json, whose expected
// output Node computed as JSON.stringify(JSON.parse(input)) (testdata/gen.js).
func TestStringifyMatchesNode(t *testing.T) {
	raw, err := os.ReadFile("testdata/stringify.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Input, Want string }
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		got, err := Stringify([]byte(c.Input))
		if err != nil {
			t.Errorf("Stringify(%s): %v", c.Input, err)
			continue
		}
		if string(got) != c.Want {
			t.Errorf("Stringify(%s)\n got %s\nwant %s", c.Input, got, c.Want)
		}
	}
}

// TestMarshalIsNotHTMLEscaped: what encoding/json escapes for HTML's sake goes as it
// is, as JSON.stringify writes it; map keys keep encoding/json's order unless they are
// array indexes.
func TestMarshalIsNotHTMLEscaped(t *testing.T) {
	got, err := Marshal(map[string]any{
		"speech": "a < b && c > d", "sep": "\u2028\u2029", "n": 1.0, "10": true, "9": false,
		"raw": json.RawMessage(`{"x" : "\u003c"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"9":false,"10":true,"n":1,"raw":{"x":"<"},"sep":"` + "\u2028\u2029" + `","speech":"a < b && c > d"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("a func encoded")
	}
}

func TestStringifyRefusesInvalid(t *testing.T) {
	for _, in := range []string{``, `{`, `[1,]`, `{"a"}`, `1 2`, `nul`, strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)} {
		if out, err := Stringify([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Stringify(%.20q) = %s, %v; want ErrInvalid", in, out, err)
		}
	}
}

// FuzzStringify: for any input, Stringify either refuses it (ErrInvalid, exactly
// when encoding/json finds it invalid, or too deep) or returns valid JSON that it
// maps to itself (JSON.stringify(JSON.parse(x)) is a fixed point), holds no HTML
// escapes encoding/json would add, and decodes to the value the input decodes to.
func FuzzStringify(f *testing.F) {
	for _, s := range []string{`{"a":"<&>","10":1,"9":[1.0,-0,1e400]}`, `"\u2028"`, `[]`, `{"a":1,"a":{"b":2}}`, `"\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Stringify(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			if json.Valid(in) && depth(in) <= MaxDepth {
				t.Fatalf("valid %q refused: %v", in, err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("invalid %q accepted as %s", in, out)
		}
		if !json.Valid(out) {
			t.Fatalf("%q gave invalid %q", in, out)
		}
		again, err := Stringify(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", in, out, again, err)
		}
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`} {
			if bytes.Contains(out, []byte(esc)) && !bytes.Contains(out, []byte(`\\`+esc[1:])) {
				t.Fatalf("%q holds the escape %s", out, esc)
			}
		}
		var a, b any
		if json.Unmarshal(in, &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatalf("%q does not decode: %v", out, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%q decodes to %v, %q to %v", in, a, out, b)
			}
		}
	})
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(in []byte) int {
	d, most, inString := 0, 0, false
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

// FuzzMarshalRaw: Marshal's one-pass rewrite of encoding/json's output agrees with
// Stringify's parse and rewrite, for any valid JSON given as a RawMessage without a
// key given twice or a lone surrogate escape (where the two differ on purpose).
func FuzzMarshalRaw(f *testing.F) {
	for _, s := range []string{`{"a":"<&>\u2028\/\u0041\ufffd","10":1}`, `[1.0,-0,1e400,12345678901234567890,-5]`,
		`{"k":"\ud83d\ude00\n\u001f\u007f"}`, `"\"\\"`, `{"a":{"01":1,"b":[{}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) || depth(in) > MaxDepth || hasDuplicateKey(in) || bytes.Contains(bytes.ToLower(in), []byte(`\ud`)) {
			return
		}
		got, err := Marshal(json.RawMessage(in))
		if err != nil {
			t.Fatalf("Marshal(%q): %v", in, err)
		}
		want, err := Stringify(in)
		if err != nil {
			t.Fatalf("Stringify(%q): %v", in, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Marshal %q\n     = %q\nStringify %q", in, got, want)
		}
	})
}

// hasDuplicateKey reports whether an object of valid JSON in gives a key twice.
func hasDuplicateKey(in []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(in))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}
