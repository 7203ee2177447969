package verbs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Decode parses a JSON array of verbs (either shape: {"verb":"say",...} or {"say":{...}}) and
// validates every verb. A JSON body that is not an array of objects is an error too.
// Every error is a *ValidationError wrapping ErrInvalidPayload; on error no verbs are
// returned. An empty array yields an empty, non-nil slice.
func Decode(data []byte) ([]Verb, error) {
	if err := checkBounds(data, -1); err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, syntaxError(data)
	}
	items, ok := splitArray(data)
	if !ok {
		return nil, &ValidationError{Index: -1, Reason: "want array of verbs, got " + jsonType(data)}
	}
	if len(items) > MaxVerbs {
		return nil, &ValidationError{Index: -1, Reason: fmt.Sprintf("%d verbs exceed the limit of %d", len(items), MaxVerbs)}
	}
	out := make([]Verb, 0, len(items))
	for i, raw := range items {
		v, err := decodeVerb(i, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// DecodeOne parses a single verb object. Errors carry Index -1.
func DecodeOne(data []byte) (Verb, error) {
	if err := checkBounds(data, -1); err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, syntaxError(data)
	}
	return decodeVerb(-1, data)
}

// syntaxError describes why data is not JSON; only called once json.Valid said so.
func syntaxError(data []byte) error {
	var probe any
	reason := "invalid JSON"
	if err := json.Unmarshal(data, &probe); err != nil {
		reason += ": " + err.Error()
	}
	return &ValidationError{Index: -1, Reason: reason}
}

// decodeVerb normalizes either shape to a name and a property object, then fills the
// verb's struct from its property table.
func decodeVerb(index int, raw []byte) (Verb, error) {
	m, ok := splitObject(raw)
	if !ok {
		return nil, &ValidationError{Index: index, Reason: "want verb object, got " + jsonType(raw)}
	}
	var name string
	props := m
	if nv, ok := lookup(m, "verb"); ok {
		if t := jsonType(nv); t != "string" {
			return nil, &ValidationError{Index: index, Field: "verb", Reason: "want string, got " + t}
		}
		var d decoder
		name, _ = d.unquote(nv, "") // valid JSON string: cannot fail
		props = make([]member, 0, len(m)-1)
		for _, p := range m {
			if p.key != "verb" {
				props = append(props, p)
			}
		}
	} else {
		if len(m) != 1 {
			return nil, &ValidationError{Index: index, Reason: `missing verb property: want {"verb":"name",...} or {"name":{...}}`}
		}
		name = m[0].key
		if !Known(name) {
			return nil, &ValidationError{Index: index, Reason: fmt.Sprintf("unknown verb %q", name)}
		}
		inner, ok := splitObject(m[0].val)
		if !ok {
			return nil, &ValidationError{Index: index, Verb: name, Reason: "want object of properties, got " + jsonType(m[0].val)}
		}
		props = inner
	}
	// Errors name the verb as the application wrote it ("stream", "openai_s2s").
	given := name
	name, props = normalize(name, props)
	ctor, ok := registry[name]
	if !ok {
		return nil, &ValidationError{Index: index, Reason: fmt.Sprintf("unknown verb %q", name)}
	}
	v := ctor()
	d := decoder{index: index, verb: given}
	rv := reflect.ValueOf(v).Elem()
	if err := d.object(schemas[rv.Type()], props, rv, ""); err != nil {
		return nil, err
	}
	return v, nil
}

// decoder carries the position used in error messages.
type decoder struct {
	index int
	verb  string
}

func (d *decoder) fail(field, reason string) error {
	return &ValidationError{Index: d.index, Verb: d.verb, Field: field, Reason: reason}
}

// object fills dst (a struct) from props. Properties are checked in document order,
// then required ones, so the error reported for a payload with several faults is
// always the same one. A JSON null counts as the property being absent.
func (d *decoder) object(s *schema, props []member, dst reflect.Value, path string) error {
	for _, p := range props {
		fi, ok := s.byName[p.key]
		if !ok {
			return d.fail(path+p.key, "unknown property")
		}
		if jsonType(p.val) == "null" {
			continue
		}
		f := &s.fields[fi]
		if err := d.value(f, p.val, dst.Field(f.index), path+p.key); err != nil {
			return err
		}
	}
	for i := range s.fields {
		f := &s.fields[i]
		if !f.required {
			continue
		}
		raw, ok := lookup(props, f.name)
		if !ok || jsonType(raw) == "null" {
			return d.fail(path+f.name, "required")
		}
		fv := dst.Field(f.index)
		if (fv.Kind() == reflect.String || fv.Kind() == reflect.Slice) && fv.Len() == 0 {
			return d.fail(path+f.name, "must not be empty")
		}
	}
	if fin, ok := dst.Addr().Interface().(finisher); ok {
		if field, reason := fin.finish(); reason != "" {
			return d.fail(path+field, reason)
		}
	}
	return nil
}

// value decodes one property into dst according to its kind.
func (d *decoder) value(f *field, raw []byte, dst reflect.Value, path string) error {
	t := jsonType(raw)
	switch f.kind {
	case kindString:
		s, err := d.str(raw, t, path)
		if err != nil {
			return err
		}
		if err := d.inEnum(f, s, path); err != nil {
			return err
		}
		dst.SetString(s)
	case kindBool, kindBoolPtr:
		if t != "boolean" {
			return d.fail(path, "want boolean, got "+t)
		}
		b := raw[0] == 't'
		if f.kind == kindBoolPtr {
			dst.Set(reflect.ValueOf(&b))
			break
		}
		dst.SetBool(b)
	case kindNumber:
		n, err := d.number(raw, t, f.numstr, path)
		if err != nil {
			return err
		}
		if dst.Kind() == reflect.Pointer {
			dst.Set(reflect.New(dst.Type().Elem()))
			dst = dst.Elem()
		}
		dst.SetFloat(n)
	case kindInt:
		n, err := d.integer(f, raw, t, path)
		if err != nil {
			return err
		}
		dst.SetInt(int64(n))
	case kindStrings:
		list, err := d.strings(f, raw, t, path)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(list))
	case kindObject:
		if t != "object" {
			return d.fail(path, "want object, got "+t)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return d.fail(path, "invalid value: "+err.Error())
		}
		dst.Set(reflect.ValueOf(m))
	case kindObjects:
		items, ok := splitArray(raw)
		if !ok {
			return d.fail(path, "want array of objects, got "+t)
		}
		list := make([]map[string]any, 0, len(items))
		for i, it := range items {
			p := path + "[" + strconv.Itoa(i) + "]"
			if it := jsonType(it); it != "object" {
				return d.fail(p, "want object, got "+it)
			}
			var m map[string]any
			if err := json.Unmarshal(it, &m); err != nil {
				return d.fail(p, "invalid value: "+err.Error())
			}
			list = append(list, m)
		}
		dst.Set(reflect.ValueOf(list))
	case kindHeaders:
		h, err := d.headers(raw, t, path)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(h))
	case kindHook:
		if f.strHook && t != "string" {
			return d.fail(path, "want string, got "+t+" (jambonz's spec takes only a URL here)")
		}
		h, err := d.hook(raw, t, path)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(h))
	case kindAny:
		if !containsString(f.types, t) {
			return d.fail(path, "want "+strings.Join(f.types, " or ")+", got "+t)
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return d.fail(path, "invalid value: "+err.Error())
		}
		dst.Set(reflect.ValueOf(&v).Elem())
	case kindNested:
		elem, err := d.nested(f.elem, raw, t, path)
		if err != nil {
			return err
		}
		dst.Set(elem.Addr())
	case kindNestedList:
		items, ok := splitArray(raw)
		if !ok {
			return d.fail(path, "want array of objects, got "+t)
		}
		list := reflect.MakeSlice(dst.Type(), 0, len(items))
		for i, it := range items {
			elem, err := d.nested(f.elem, it, jsonType(it), path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return err
			}
			if f.elemPtr {
				elem = elem.Addr()
			}
			list = reflect.Append(list, elem)
		}
		dst.Set(list)
	}
	return nil
}

// nested decodes an object property whose type has its own table (gather.say,
// dial.target[i], ...) and returns the addressable struct value.
func (d *decoder) nested(s *schema, raw []byte, t, path string) (reflect.Value, error) {
	props, ok := splitObject(raw)
	if !ok {
		return reflect.Value{}, d.fail(path, "want object, got "+t)
	}
	elem := reflect.New(s.typ).Elem()
	if err := d.object(s, props, elem, path+"."); err != nil {
		return reflect.Value{}, err
	}
	return elem, nil
}
