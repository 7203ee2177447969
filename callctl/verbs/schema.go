package verbs

import (
	"fmt"
	"reflect"
	"strings"
)

// kind is how one property is read from JSON, derived from the Go field type and its
// `verb` tag. One table per struct type drives decoding, encoding and Hooks, so the
// three cannot disagree about a property.
type kind uint8

const (
	kindString     kind = iota // string, optionally restricted by enum=
	kindBool                   // bool
	kindBoolPtr                // *bool: absent and false differ (conference.startConferenceOnEnter)
	kindNumber                 // float64, non-negative; numstr also accepts "1.5"
	kindInt                    // int, non-negative integer; loop also accepts "forever" and "3"
	kindStrings                // []string; list also accepts a single string
	kindObject                 // map[string]any
	kindObjects                // []map[string]any
	kindHeaders                // map[string]string (number and boolean values become strings)
	kindHook                   // *Hook: a URL string or {url, method, username, password}
	kindAny                    // any, restricted by types= (number, string, object)
	kindNested                 // *T where T is a struct with its own table
	kindNestedList             // []T or []*T
)

// field describes one JSON property of a struct.
type field struct {
	name     string
	index    int
	kind     kind
	required bool
	list     bool
	loop     bool
	strHook  bool // a hook jambonz's spec types "string": the object form is refused
	numstr   bool
	enum     []string
	types    []string
	elem     *schema
	elemPtr  bool
}

// schema is the property table of one struct type.
type schema struct {
	typ    reflect.Type
	fields []field
	byName map[string]int
	hooks  []int // positions in fields of the *Hook properties
}

// finisher is implemented by types with rules that span properties (or defaults to
// fill in); it runs after the properties decoded and reports the field at fault.
type finisher interface {
	finish() (field, reason string)
}

var schemas = map[reflect.Type]*schema{}

// kindsByType are the field types of a kind of their own, whatever their Go kind.
var kindsByType = map[reflect.Type]kind{
	reflect.TypeFor[*Hook]():             kindHook,
	reflect.TypeFor[any]():               kindAny,
	reflect.TypeFor[map[string]any]():    kindObject,
	reflect.TypeFor[[]map[string]any]():  kindObjects,
	reflect.TypeFor[map[string]string](): kindHeaders,
	reflect.TypeFor[[]string]():          kindStrings,
}

// init builds every table once, before any decode, so lookups need no locking.
func init() {
	for _, ctor := range registry {
		schemaFor(reflect.TypeOf(ctor()).Elem())
	}
}

// schemaFor returns (building on first use, at init) the table of struct type t.
// A type it cannot map is a programming error in this package, so it panics at init.
func schemaFor(t reflect.Type) *schema {
	if s, ok := schemas[t]; ok {
		return s
	}
	s := &schema{typ: t, byName: map[string]int{}}
	schemas[t] = s
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			panic(fmt.Sprintf("verbs: %s.%s has no json name", t.Name(), sf.Name))
		}
		f := field{name: name, index: i}
		for _, opt := range strings.Split(sf.Tag.Get("verb"), ",") {
			switch {
			case opt == "":
			case opt == "required":
				f.required = true
			case opt == "list":
				f.list = true
			case opt == "loop":
				f.loop = true
			case opt == "numstr":
				f.numstr = true
			case opt == "string":
				f.strHook = true
			case strings.HasPrefix(opt, "enum="):
				f.enum = strings.Split(strings.TrimPrefix(opt, "enum="), "|")
			case strings.HasPrefix(opt, "types="):
				f.types = strings.Split(strings.TrimPrefix(opt, "types="), "|")
			default:
				panic(fmt.Sprintf("verbs: %s.%s: unknown tag option %q", t.Name(), sf.Name, opt))
			}
		}
		f.kind = kindOf(t, sf, &f)
		if f.kind == kindHook {
			s.hooks = append(s.hooks, len(s.fields))
		}
		s.byName[name] = len(s.fields)
		s.fields = append(s.fields, f)
	}
	return s
}

func kindOf(t reflect.Type, sf reflect.StructField, f *field) kind {
	ft := sf.Type
	if k, ok := kindsByType[ft]; ok {
		return k
	}
	switch ft.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	case reflect.Float64:
		return kindNumber
	case reflect.Int:
		return kindInt
	case reflect.Pointer:
		if ft.Elem().Kind() == reflect.Bool {
			return kindBoolPtr
		}
		if ft.Elem().Kind() == reflect.Struct {
			f.elem = schemaFor(ft.Elem())
			return kindNested
		}
		if ft.Elem().Kind() == reflect.Float64 {
			// A number whose absence means something else than 0 (gather's timeout: 0
			// is "no timeout", absent the default).
			return kindNumber
		}
	case reflect.Slice:
		et := ft.Elem()
		if et.Kind() == reflect.Pointer && et.Elem().Kind() == reflect.Struct {
			f.elem, f.elemPtr = schemaFor(et.Elem()), true
			return kindNestedList
		}
		if et.Kind() == reflect.Struct {
			f.elem = schemaFor(et)
			return kindNestedList
		}
	}
	panic(fmt.Sprintf("verbs: %s.%s: unsupported type %s", t.Name(), sf.Name, ft))
}

// hooksOf returns the set hook properties of a verb, nil when none is set.
func hooksOf(v Verb) map[string]*Hook {
	rv := reflect.ValueOf(v).Elem()
	s := schemas[rv.Type()]
	var out map[string]*Hook
	for _, fi := range s.hooks {
		f := &s.fields[fi]
		h := rv.Field(f.index).Interface().(*Hook)
		if h == nil {
			continue
		}
		if out == nil {
			out = make(map[string]*Hook, len(s.hooks))
		}
		out[f.name] = h
	}
	return out
}
