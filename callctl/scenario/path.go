package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Path is a path into a payload the application received (expect.received[].payload
// keys): field names joined by dots, each optionally followed by list indexes, as in
// speech.alternatives[0].transcript. A field name is any text without '.', '[' or
// ']'.
type Path []Step

// Step is one step of a Path: a field of an object, or an element of a list.
type Step struct {
	Field   string
	Index   int // when IsIndex
	IsIndex bool
}

// maxPathIndex bounds a list index in a path: payloads are at most 1 MiB.
const maxPathIndex = 1 << 20

// ErrPath is wrapped by every error ParsePath returns.
var ErrPath = errors.New("not a payload path (write e.g. digits, or speech.alternatives[0].transcript)")

// ParsePath reads a path. It refuses an empty path, an empty field name, an index
// that is not plain decimal digits (at most 1048576), and anything after an index
// but another index or a dot.
func ParsePath(s string) (Path, error) {
	bad := func(why string) (Path, error) { return nil, fmt.Errorf("%q: %s: %w", s, why, ErrPath) }
	if s == "" {
		return bad("empty")
	}
	var p Path
	for _, seg := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name == "" || strings.Contains(name, "]") {
			return bad("a field name is empty or has a ']'")
		}
		p = append(p, Step{Field: name})
		if len(seg) == len(name) {
			continue
		}
		rest = "[" + rest
		for rest != "" {
			if rest[0] != '[' {
				return bad("only [index] may follow a field name")
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return bad("an index has no ']'")
			}
			digits := rest[1:end]
			n, err := strconv.Atoi(digits)
			if err != nil || digits == "" || strings.Trim(digits, "0123456789") != "" || n > maxPathIndex {
				return bad(fmt.Sprintf("index %q is not a number of at most %d", digits, maxPathIndex))
			}
			// One spelling per path: "a[01]" would read back as "a[1]".
			if len(digits) > 1 && digits[0] == '0' {
				return bad(fmt.Sprintf("index %q has a leading zero", digits))
			}
			p = append(p, Step{Index: n, IsIndex: true})
			rest = rest[end+1:]
		}
	}
	return p, nil
}

// String writes the path as ParsePath reads it.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.IsIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Field)
		}
	}
	return b.String()
}

// Lookup follows the path in v, a value decoded from JSON (objects map[string]any,
// lists []any), and reports whether it leads anywhere.
func (p Path) Lookup(v any) (any, bool) {
	for _, s := range p {
		switch x := v.(type) {
		case map[string]any:
			if s.IsIndex {
				return nil, false
			}
			var ok bool
			if v, ok = x[s.Field]; !ok {
				return nil, false
			}
		case []any:
			if !s.IsIndex || s.Index >= len(x) {
				return nil, false
			}
			v = x[s.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

// jsonValue is v as encoding/json decodes it (objects map[string]any, numbers
// float64), so that a payload of Go values and a value written in YAML compare alike.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// canonical is v's JSON text, object keys sorted.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
