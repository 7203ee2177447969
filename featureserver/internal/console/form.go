package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// The console turns form fields into the API's JSON and nothing more: whether an
// event type, a policy or a time is acceptable is the API's to say (docs/outbox.md
// §4), so these parsers only reject what cannot be put into a request at all.

// parseEvents reads an events field: types separated by commas, spaces or new
// lines; empty is every type (nil). Duplicates are dropped, order kept; how many
// and which types an endpoint may take is the API's to say.
func parseEvents(field string) []string {
	items := strings.FieldsFunc(field, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(items) == 0 {
		return nil
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}

// parsePolicy reads a policy field: a JSON object of overrides, or empty for none
// (nil). It is handed to the API as written.
func parsePolicy(field string) (json.RawMessage, error) {
	field = strings.TrimSpace(field)
	if field == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(field))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, errors.New("policy: not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("policy: more than one JSON value")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(field)); err != nil {
		return nil, errors.New("policy: not a JSON object")
	}
	return buf.Bytes(), nil
}

// timeLayouts are the forms a time field takes: an <input type="datetime-local">
// (read in UTC, as the console shows every time) or RFC 3339.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// parseTime reads a time field; empty is the zero time.
func parseTime(field string) (time.Time, error) {
	field = strings.TrimSpace(field)
	if field == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, field, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: give 2006-01-02T15:04 (UTC) or RFC 3339", field)
}

// parseHeaders reads a headers field: one "Name: value" a line, blank lines
// skipped; empty is none (nil). Which names and values are acceptable is the API's to
// say.
func parseHeaders(field string) (map[string]string, error) {
	var out map[string]string
	for i, line := range strings.Split(field, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("headers, line %d: want Name: value", i+1)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out, nil
}

// parseFilter reads a filter field: JSON, or empty for none (nil), handed to the API
// as written.
func parseFilter(field string) (json.RawMessage, error) {
	field = strings.TrimSpace(field)
	if field == "" {
		return nil, nil
	}
	if !json.Valid([]byte(field)) {
		return nil, errors.New("filter: not JSON")
	}
	return json.RawMessage(field), nil
}
