package verbs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The readers of single property values below each check the JSON type, convert,
// and name the property path in their errors.

func (d *decoder) str(raw []byte, t, path string) (string, error) {
	if t != "string" {
		return "", d.fail(path, "want string, got "+t)
	}
	return d.unquote(raw, path)
}

// unquote returns the text of a JSON string, slicing it out directly when it holds no
// escapes or non-ASCII bytes (the common case) and using encoding/json otherwise.
func (d *decoder) unquote(raw []byte, path string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) >= 2 {
		inner := raw[1 : len(raw)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", d.fail(path, "invalid value: "+err.Error())
	}
	return s, nil
}

func (d *decoder) inEnum(f *field, s, path string) error {
	if len(f.enum) == 0 || containsString(f.enum, s) {
		return nil
	}
	return d.fail(path, fmt.Sprintf("%q is not one of %s", s, strings.Join(f.enum, ", ")))
}

// number reads a non-negative finite number; with numstr a string holding one is
// accepted too, as jambonz's "number|string" properties allow.
func (d *decoder) number(raw []byte, t string, numstr bool, path string) (float64, error) {
	var text string
	switch {
	case t == "number":
		text = string(raw)
	case t == "string" && numstr:
		s, err := d.str(raw, t, path)
		if err != nil {
			return 0, err
		}
		text = strings.TrimSpace(s)
	case numstr:
		return 0, d.fail(path, "want number or numeric string, got "+t)
	default:
		return 0, d.fail(path, "want number, got "+t)
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, d.fail(path, fmt.Sprintf("%q is not a finite number", text))
	}
	if n < 0 {
		return 0, d.fail(path, "must not be negative")
	}
	return n, nil
}

// maxInt bounds integer properties to values every platform's int and a float64
// represent exactly.
const maxInt = 1 << 31

// integer reads a non-negative whole number; a loop property also accepts "forever"
// (LoopForever) and a string holding a whole number.
func (d *decoder) integer(f *field, raw []byte, t, path string) (int, error) {
	if f.loop && t == "string" {
		s, err := d.str(raw, t, path)
		if err != nil {
			return 0, err
		}
		if s == "forever" {
			return LoopForever, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n > maxInt {
			return 0, d.fail(path, fmt.Sprintf(`want a whole number or "forever", got %q`, s))
		}
		return n, nil
	}
	if t != "number" {
		if f.loop {
			return 0, d.fail(path, `want number or "forever", got `+t)
		}
		return 0, d.fail(path, "want number, got "+t)
	}
	n, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || n != math.Trunc(n) {
		return 0, d.fail(path, fmt.Sprintf("want a whole number, got %s", raw))
	}
	if n < 0 {
		return 0, d.fail(path, "must not be negative")
	}
	if n > maxInt {
		return 0, d.fail(path, fmt.Sprintf("%s is too large", raw))
	}
	return int(n), nil
}

func (d *decoder) strings(f *field, raw []byte, t, path string) ([]string, error) {
	if t == "string" && f.list {
		s, err := d.str(raw, t, path)
		if err != nil {
			return nil, err
		}
		if err := d.inEnum(f, s, path); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	items, ok := splitArray(raw)
	if !ok {
		if f.list {
			return nil, d.fail(path, "want string or array of strings, got "+t)
		}
		return nil, d.fail(path, "want array of strings, got "+t)
	}
	list := make([]string, 0, len(items))
	for i, it := range items {
		p := path + "[" + strconv.Itoa(i) + "]"
		s, err := d.str(it, jsonType(it), p)
		if err != nil {
			return nil, err
		}
		if err := d.inEnum(f, s, p); err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	return list, nil
}

// headers reads a SIP header object. Numbers and booleans are kept as their JSON text
// because apps often write {"X-Count": 3}.
func (d *decoder) headers(raw []byte, t, path string) (map[string]string, error) {
	m, ok := splitObject(raw)
	if !ok {
		return nil, d.fail(path, "want object, got "+t)
	}
	h := make(map[string]string, len(m))
	for _, p := range m {
		k, v := p.key, p.val
		switch vt := jsonType(v); vt {
		case "string":
			s, err := d.str(v, vt, path+"."+k)
			if err != nil {
				return nil, err
			}
			h[k] = s
		case "number", "boolean":
			h[k] = string(bytes.TrimSpace(v))
		default:
			return nil, d.fail(path+"."+k, "want string, got "+vt)
		}
	}
	return h, nil
}

// hook reads a URL string or a {url, method, username, password} object.
func (d *decoder) hook(raw []byte, t, path string) (*Hook, error) {
	switch t {
	case "string":
		s, err := d.str(raw, t, path)
		if err != nil {
			return nil, err
		}
		if s == "" {
			return nil, d.fail(path, "must not be empty")
		}
		return &Hook{URL: s}, nil
	case "object":
	default:
		return nil, d.fail(path, "want string or object, got "+t)
	}
	m, _ := splitObject(raw) // t is "object"
	h := &Hook{}
	for _, p := range m {
		k, v := p.key, p.val
		vt := jsonType(v)
		if vt == "null" {
			continue
		}
		var dst *string
		switch k {
		case "url":
			dst = &h.URL
		case "method":
			dst = &h.Method
		case "username":
			dst = &h.Username
		case "password":
			dst = &h.Password
		default:
			return nil, d.fail(path+"."+k, "unknown property")
		}
		s, err := d.str(v, vt, path+"."+k)
		if err != nil {
			return nil, err
		}
		*dst = s
	}
	if h.URL == "" {
		return nil, d.fail(path+".url", "required")
	}
	if h.Method != "" {
		h.Method = strings.ToUpper(h.Method)
		if h.Method != "GET" && h.Method != "POST" {
			return nil, d.fail(path+".method", fmt.Sprintf("%q is not one of GET, POST", h.Method))
		}
	}
	return h, nil
}

// jsonType names the JSON type of an already-validated value by its first byte.
func jsonType(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
