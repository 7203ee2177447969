package verbs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// Encode writes verbs as a JSON array in the {"verb":"name",...} shape, omitting unset
// optional properties (required ones are always written). Decode(Encode(v)) yields
// values equal to v for any v that Decode produced. It fails only for a nil verb or a
// verb type this package does not define.
func Encode(vs []Verb) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeVerb(&b, v); err != nil {
			return nil, fmt.Errorf("encode verb %d: %w", i, err)
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// EncodeOne writes one verb as a {"verb":"name",...} object.
func EncodeOne(v Verb) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeVerb(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeVerb(b *bytes.Buffer, v Verb) error {
	if v == nil {
		return fmt.Errorf("nil verb")
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("verb %T is not a non-nil pointer", v)
	}
	s, ok := schemas[rv.Elem().Type()]
	if !ok {
		return fmt.Errorf("verb type %T is not defined by package verbs", v)
	}
	b.WriteString(`{"verb":`)
	writeJSON(b, v.Name())
	encodeFields(b, s, rv.Elem(), true)
	b.WriteByte('}')
	return nil
}

// encodeFields writes the set properties of struct value rv; comma says whether a
// separator is needed before the first one.
func encodeFields(b *bytes.Buffer, s *schema, rv reflect.Value, comma bool) {
	for i := range s.fields {
		f := &s.fields[i]
		fv := rv.Field(f.index)
		if fv.IsZero() && !f.required {
			continue
		}
		if f.kind == kindNested && fv.IsNil() {
			continue
		}
		if comma {
			b.WriteByte(',')
		}
		comma = true
		writeJSON(b, f.name)
		b.WriteByte(':')
		encodeValue(b, f, fv)
	}
}

func encodeValue(b *bytes.Buffer, f *field, fv reflect.Value) {
	switch f.kind {
	case kindNumber:
		if fv.Kind() == reflect.Pointer {
			fv = fv.Elem() // set: IsZero skipped a nil one
		}
		b.WriteString(strconv.FormatFloat(fv.Float(), 'g', -1, 64))
	case kindInt:
		if f.loop && fv.Int() == LoopForever {
			b.WriteString(`"forever"`)
			return
		}
		b.WriteString(strconv.FormatInt(fv.Int(), 10))
	case kindHook:
		h := fv.Interface().(*Hook)
		if h.simple() {
			writeJSON(b, h.URL)
			return
		}
		writeJSON(b, h)
	case kindNested:
		b.WriteByte('{')
		encodeFields(b, f.elem, fv.Elem(), false)
		b.WriteByte('}')
	case kindNestedList:
		b.WriteByte('[')
		for i := 0; i < fv.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ev := fv.Index(i)
			if f.elemPtr {
				if ev.IsNil() {
					b.WriteString("{}")
					continue
				}
				ev = ev.Elem()
			}
			b.WriteByte('{')
			encodeFields(b, f.elem, ev, false)
			b.WriteByte('}')
		}
		b.WriteByte(']')
	default:
		writeJSON(b, fv.Interface())
	}
}

// writeJSON appends v without HTML escaping, so that text survives a round trip
// unchanged in size (json.Marshal would turn "<" into six bytes).
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value here came out of encoding/json (strings, finite float64,
		// maps of those), so it always encodes; write null rather than panic.
		b.WriteString("null")
		return
	}
	b.Truncate(b.Len() - 1) // Encode's trailing newline
}
