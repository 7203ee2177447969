package jsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// MaxDepth bounds the nesting of arrays and objects Stringify reads.
const MaxDepth = 10000

// ErrInvalid is wrapped by the errors of Stringify about input that is not JSON.
var ErrInvalid = errors.New("jsjson: invalid JSON")

// Marshal returns v encoded as encoding/json encodes it (struct tags, Marshaler,
// RawMessage), then written as JSON.stringify would write the value JSON.parse reads
// from that: see Stringify. (Unlike Stringify it keeps a key that a RawMessage inside
// v gives twice, and a lone surrogate escape as JavaScript does.)
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// One pass over encoding/json's compact output does it, unless an object has an
	// array-index key: then the keys are reordered on the parsed value.
	if out, ok := rewrite(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); ok {
		return out, nil
	}
	return Stringify(buf.Bytes())
}

// Stringify returns JSON.stringify(JSON.parse(raw)) as JavaScript computes it, for
// JSON raw: whitespace dropped; strings with only '"', '\\' and the control
// characters escaped (\b \t \n \f \r, others as \u00xx), so '<', '>', '&', U+2028 and
// U+2029 go as they are (encoding/json escapes them); numbers as the double they
// denote, written as Number.prototype.toString does (1.0 is 1, 1E2 is 100, -0 is 0,
// a number out of range is null); object keys in JavaScript's order: the array-index
// keys ("0" .. "4294967294") first in ascending numeric order, then the others in the
// order given, a key given twice keeping its first place and its last value. Input
// that is not JSON, or is nested deeper than MaxDepth, is an error wrapping
// ErrInvalid. (A lone UTF-16 surrogate escape reads as U+FFFD, where JavaScript
// would keep it; nothing this module sends has one.)
func Stringify(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := read(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the value", ErrInvalid)
	}
	return v.append(make([]byte, 0, len(raw))), nil
}

// value is one parsed JSON value, objects keeping their keys in JavaScript's order.
type value struct {
	kind  byte // 'n' null, 't' true, 'f' false, '#' number, '"' string, '[' array, '{' object
	text  string
	items []value  // array elements, object values
	keys  []string // object keys, beside items
}

func read(dec *json.Decoder, depth int) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return value{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch t := tok.(type) {
	case nil:
		return value{kind: 'n'}, nil
	case bool:
		if t {
			return value{kind: 't'}, nil
		}
		return value{kind: 'f'}, nil
	case json.Number:
		return value{kind: '#', text: jsNumber(string(t))}, nil
	case string:
		return value{kind: '"', text: t}, nil
	case json.Delim:
		if depth >= MaxDepth {
			return value{}, fmt.Errorf("%w: nested deeper than %d", ErrInvalid, MaxDepth)
		}
		if t == '[' {
			v := value{kind: '['}
			for dec.More() {
				item, err := read(dec, depth+1)
				if err != nil {
					return value{}, err
				}
				v.items = append(v.items, item)
			}
			if _, err := dec.Token(); err != nil {
				return value{}, fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			return v, nil
		}
		return readObject(dec, depth)
	}
	return value{}, fmt.Errorf("%w: unexpected %v", ErrInvalid, tok)
}

func readObject(dec *json.Decoder, depth int) (value, error) {
	v := value{kind: '{'}
	var index map[string]int // key -> position, once the object is large
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return value{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		key, ok := tok.(string)
		if !ok {
			return value{}, fmt.Errorf("%w: object key %v", ErrInvalid, tok)
		}
		item, err := read(dec, depth+1)
		if err != nil {
			return value{}, err
		}
		at := -1
		if index != nil {
			if i, ok := index[key]; ok {
				at = i
			}
		} else {
			at = slices.Index(v.keys, key)
		}
		if at >= 0 {
			v.items[at] = item // JSON.parse: the last value, in the first place
			continue
		}
		v.keys = append(v.keys, key)
		v.items = append(v.items, item)
		if index == nil && len(v.keys) > 16 {
			index = make(map[string]int, 2*len(v.keys))
			for i, k := range v.keys {
				index[k] = i
			}
		} else if index != nil {
			index[key] = len(v.keys) - 1
		}
	}
	if _, err := dec.Token(); err != nil {
		return value{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	v.order()
	return v, nil
}

// order puts the array-index keys first, ascending, as JavaScript's property order
// does; the others keep their order.
func (v *value) order() {
	n := 0
	for _, k := range v.keys {
		if _, ok := arrayIndex(k); ok {
			n++
		}
	}
	if n == 0 {
		return
	}
	type member struct {
		key   string
		idx   uint32
		isIdx bool
		item  value
	}
	ms := make([]member, len(v.keys))
	for i, k := range v.keys {
		idx, ok := arrayIndex(k)
		ms[i] = member{k, idx, ok, v.items[i]}
	}
	slices.SortStableFunc(ms, func(a, b member) int {
		switch {
		case a.isIdx && b.isIdx:
			return int(int64(a.idx) - int64(b.idx))
		case a.isIdx:
			return -1
		case b.isIdx:
			return 1
		}
		return 0
	})
	for i, m := range ms {
		v.keys[i], v.items[i] = m.key, m.item
	}
}

// arrayIndex reports whether k is an array index: the canonical decimal form of an
// integer from 0 to 2^32-2.
func arrayIndex(k string) (uint32, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n >= math.MaxUint32 {
		return 0, false
	}
	return uint32(n), true
}

// jsNumber writes the double a JSON number denotes as Number.prototype.toString does
// (encoding/json's float formatting follows the same rules), -0 as 0 and a value
// out of range as null, as JSON.stringify writes Infinity.
func jsNumber(text string) string {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs < 1e21 && abs >= 1e-6 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	b := strconv.AppendFloat(nil, f, 'e', -1, 64)
	// "1e-07" -> "1e-7", as JavaScript writes exponents.
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return string(b)
}

const hex = "0123456789abcdef"

func (v value) append(b []byte) []byte {
	switch v.kind {
	case 'n':
		return append(b, "null"...)
	case 't':
		return append(b, "true"...)
	case 'f':
		return append(b, "false"...)
	case '#':
		return append(b, v.text...)
	case '"':
		return appendString(b, v.text)
	case '[':
		b = append(b, '[')
		for i, item := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.append(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, k := range v.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = v.items[i].append(b)
	}
	return append(b, '}')
}

// shortEscapes holds, for each character QuoteJSONString writes as a backslash and
// one more character, that character; every other control character is \u00XX.
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// appendString writes s as JSON.stringify's QuoteJSONString does. s is valid UTF-8
// (the decoder replaced anything else with U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		if short := shortEscapes[c]; short != 0 {
			b = append(b, '\\', short)
		} else {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
