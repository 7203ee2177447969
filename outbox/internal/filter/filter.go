package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits of a filter: a filter is read on every publish to its endpoint's account.
const (
	// MaxBytes bounds a filter's JSON.
	MaxBytes = 16 << 10
	// MaxConditions bounds the conditions and operators of a filter, nested ones
	// included.
	MaxConditions = 256
	// MaxDepth bounds the nesting of $and, $or and $not.
	MaxDepth = 16
	// MaxPathSegments bounds the segments of one path.
	MaxPathSegments = 32
)

// Error is a filter refused by Parse: Path is where in the filter ("" for the filter
// itself, then ".key", "[i]" or `["a.b"]` for a key with dots), Reason why.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Filter is a parsed filter. The zero Filter (and a nil one) matches every event.
type Filter struct {
	all []cond
}

// cond is one condition: of a path, or a $and, $or or $not of filters.
type cond struct {
	op   string // "path", "$and", "$or", "$not"
	path []string
	ops  []pathOp
	subs []Filter
}

// pathOp is one operator on a path's value.
type pathOp struct {
	op  string // $eq $ne $in $nin $exists $gt $gte $lt $lte
	val any    // a decoded JSON value ($in/$nin: []any; $exists: bool; comparisons: json.Number)
}

// Parse reads a filter: a JSON object whose members must all hold. A member is
// "$and" or "$or" with a non-empty array of filters, "$not" with a filter, or a path
// (dot-separated keys into the event's data; a key of digits also indexes an array)
// with either a JSON value, which the path's value must equal, or an object of
// operators: $eq, $ne (a value), $in, $nin (an array of values), $exists (a bool),
// $gt, $gte, $lt, $lte (a number). Empty or "null" raw is no filter (nil, nil). A
// filter refused is an *Error naming the place.
func Parse(raw []byte) (*Filter, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > MaxBytes {
		return nil, &Error{Reason: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	v, err := Decode(raw)
	if err != nil {
		return nil, &Error{Reason: "not valid JSON: " + err.Error()}
	}
	p := parser{}
	f, err := p.filter(v, "", 0)
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// Decode reads JSON as Match takes it: numbers kept exact (json.Number), one value
// and nothing after it.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

type parser struct{ n int }

func (p *parser) count(path string) error {
	p.n++
	if p.n > MaxConditions {
		return &Error{Path: path, Reason: fmt.Sprintf("more than %d conditions", MaxConditions)}
	}
	return nil
}

func (p *parser) filter(v any, path string, depth int) (Filter, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Filter{}, &Error{Path: path, Reason: "a filter is a JSON object of conditions"}
	}
	if depth > MaxDepth {
		return Filter{}, &Error{Path: path, Reason: fmt.Sprintf("nested deeper than %d", MaxDepth)}
	}
	var f Filter
	for _, key := range sortedKeys(obj) {
		at := path + member(key)
		if err := p.count(at); err != nil {
			return Filter{}, err
		}
		val := obj[key]
		switch key {
		case "$and", "$or":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				return Filter{}, &Error{Path: at, Reason: "want a non-empty array of filters"}
			}
			c := cond{op: key}
			for i, sub := range list {
				sf, err := p.filter(sub, fmt.Sprintf("%s[%d]", at, i), depth+1)
				if err != nil {
					return Filter{}, err
				}
				c.subs = append(c.subs, sf)
			}
			f.all = append(f.all, c)
		case "$not":
			sf, err := p.filter(val, at, depth+1)
			if err != nil {
				return Filter{}, err
			}
			f.all = append(f.all, cond{op: key, subs: []Filter{sf}})
		default:
			if strings.HasPrefix(key, "$") {
				return Filter{}, &Error{Path: at, Reason: "unknown operator (want $and, $or, $not, or a path into the data)"}
			}
			segs, err := splitPath(key)
			if err != nil {
				return Filter{}, &Error{Path: at, Reason: err.Error()}
			}
			ops, err := p.operators(val, at)
			if err != nil {
				return Filter{}, err
			}
			f.all = append(f.all, cond{op: "path", path: segs, ops: ops})
		}
	}
	return f, nil
}

func splitPath(key string) ([]string, error) {
	segs := strings.Split(key, ".")
	if len(segs) > MaxPathSegments {
		return nil, fmt.Errorf("a path of more than %d keys", MaxPathSegments)
	}
	for _, s := range segs {
		if s == "" {
			return nil, errors.New("a path has an empty key (two dots, or a dot at an end)")
		}
	}
	return segs, nil
}

// operators reads the value of a path: an object of operators, or a value to equal.
func (p *parser) operators(v any, at string) ([]pathOp, error) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) == 0 || !anyOperator(obj) {
		return []pathOp{{op: "$eq", val: v}}, nil
	}
	var ops []pathOp
	for _, key := range sortedKeys(obj) {
		oat := at + member(key)
		if !strings.HasPrefix(key, "$") {
			return nil, &Error{Path: oat, Reason: "an object of operators cannot also hold keys (to match an object, give it without operators)"}
		}
		if err := p.count(oat); err != nil {
			return nil, err
		}
		val := obj[key]
		switch key {
		case "$eq", "$ne":
			ops = append(ops, pathOp{op: key, val: val})
		case "$in", "$nin":
			list, ok := val.([]any)
			if !ok {
				return nil, &Error{Path: oat, Reason: "want an array of values"}
			}
			if len(list) > MaxConditions {
				return nil, &Error{Path: oat, Reason: fmt.Sprintf("more than %d values", MaxConditions)}
			}
			ops = append(ops, pathOp{op: key, val: list})
		case "$exists":
			b, ok := val.(bool)
			if !ok {
				return nil, &Error{Path: oat, Reason: "want true or false"}
			}
			ops = append(ops, pathOp{op: key, val: b})
		case "$gt", "$gte", "$lt", "$lte":
			n, ok := val.(json.Number)
			if !ok {
				return nil, &Error{Path: oat, Reason: "want a number"}
			}
			if _, ok := number(n); !ok {
				return nil, &Error{Path: oat, Reason: "a number out of range"}
			}
			ops = append(ops, pathOp{op: key, val: n})
		default:
			return nil, &Error{Path: oat, Reason: "unknown operator (want $eq, $ne, $in, $nin, $exists, $gt, $gte, $lt or $lte)"}
		}
	}
	return ops, nil
}

func anyOperator(obj map[string]any) bool {
	for k := range obj {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

// member is the path step of an object key.
func member(key string) string {
	if key != "" && !strings.ContainsAny(key, `.[]"\ `) {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

// Match reports whether data (as Decode returns it) passes f. A nil Filter passes
// everything.
func (f *Filter) Match(data any) bool {
	if f == nil {
		return true
	}
	for _, c := range f.all {
		if !c.match(data) {
			return false
		}
	}
	return true
}

func (c cond) match(data any) bool {
	switch c.op {
	case "$and":
		for i := range c.subs {
			if !c.subs[i].Match(data) {
				return false
			}
		}
		return true
	case "$or":
		for i := range c.subs {
			if c.subs[i].Match(data) {
				return true
			}
		}
		return false
	case "$not":
		return !c.subs[0].Match(data)
	}
	v, present := lookup(data, c.path)
	for _, o := range c.ops {
		if !o.match(v, present) {
			return false
		}
	}
	return true
}

func (o pathOp) match(v any, present bool) bool {
	switch o.op {
	case "$eq":
		return present && equal(v, o.val)
	case "$ne":
		return !present || !equal(v, o.val)
	case "$in", "$nin":
		in := false
		if present {
			for _, x := range o.val.([]any) {
				if equal(v, x) {
					in = true
					break
				}
			}
		}
		return in == (o.op == "$in")
	case "$exists":
		return present == o.val.(bool)
	}
	a, ok := v.(json.Number)
	if !present || !ok {
		return false
	}
	c, ok := compare(a, o.val.(json.Number))
	if !ok {
		return false
	}
	switch o.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	default: // $lte
		return c <= 0
	}
}

// lookup follows path into v: object keys, and array indexes for keys of digits.
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != seg {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// equal compares decoded JSON values: numbers by value, objects and arrays deeply.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		c, ok := compare(x, y)
		return ok && c == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

// compare orders two JSON numbers: exactly when both are integers that fit 64 bits,
// otherwise as float64. ok is false for a number a float64 cannot hold.
func compare(a, b json.Number) (int, bool) {
	if x, err := strconv.ParseInt(string(a), 10, 64); err == nil {
		if y, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	x, ok := number(a)
	y, ok2 := number(b)
	if !ok || !ok2 {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

func number(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Sorted, so that the first error reported is the same every time.
	slices.Sort(keys)
	return keys
}
