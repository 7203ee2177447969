package callctl

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/switchboard-voice/switchboard/fragment"
)

// snakeKeys returns v with every object key in snake_case, as jambonz's requestors
// write every payload (lib/utils/snakecase-keys.js with to-snake-case): the keys in
// keep, and all below them, stay as they are.
func snakeKeys(v any, keep []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if contains(keep, k) {
				out[k] = val
				continue
			}
			out[snakeCase(k)] = snakeKeys(val, keep)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeKeys(e, keep)
		}
		return out
	}
	return v
}

// snakeCase is to-snake-case's spelling of a key: camelCase words split, any other
// separator (., -, space) becomes one underscore, all lower case ("toolName" →
// "tool_name", "X-Custom" → "x_custom", "event_id" unchanged).
func snakeCase(s string) string {
	var words []string
	var cur []rune
	runes := []rune(s)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) || unicode.IsDigit(runes[i-1]) ||
			i+1 < len(runes) && unicode.IsUpper(runes[i-1]) && unicode.IsLower(runes[i+1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return strings.Join(words, "_")
}

// redactJSON returns data with what must never be echoed taken out: the user-info
// of every URL in a string, and the value of every "password" key
// (docs/call-control.md §3: neither timelines nor results quote credentials).
func redactJSON(data json.RawMessage) json.RawMessage {
	if len(data) == 0 || !bytes.Contains(data, []byte("@")) && !bytes.Contains(data, []byte(`"password"`)) {
		return data
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return nil
	}
	return out
}

func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return fragment.Redact(x)
	case map[string]any:
		for k, val := range x {
			if strings.EqualFold(k, "password") {
				x[k] = "********"
				continue
			}
			x[k] = redactValue(val)
		}
	case []any:
		for i, e := range x {
			x[i] = redactValue(e)
		}
	}
	return v
}
