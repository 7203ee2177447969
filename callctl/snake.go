package callctl

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/switchboard-voice/switchboard/fragment"
)

// jambonzKeep are the keys whose values jambonz's requestors send verbatim, at any
// depth: every other key of every payload is snake_cased (lib/utils/http-requestor.js
// and ws-requestor.js request: snakeCaseKeys(params, ['customerData', 'sip',
// 'env_vars', 'args'])).
var jambonzKeep = []string{"customerData", "sip", "env_vars", "args"}

// wirePayload is a payload as jambonz's requestors put it on the wire: its keys
// snake_cased but for jambonzKeep's.
func wirePayload(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return snakeKeys(m, jambonzKeep).(map[string]any)
}

// snakeKeys returns v with every object key in snake_case, as jambonz's requestors
// write every payload (lib/utils/snakecase-keys.js with to-snake-case): the keys in
// keep, at any depth, keep their values as they are. Two keys that snake_case alike
// (fooBar and foo_bar) collide there, the one inserted last winning; Go's maps keep
// no order, so the key already in snake_case wins.
func snakeKeys(v any, keep []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if contains(keep, k) {
				out[k] = val
				continue
			}
			sk := snakeCase(k)
			if _, taken := x[sk]; taken && sk != k {
				continue // the key already spelt so wins
			}
			out[sk] = snakeKeys(val, keep)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeKeys(e, keep)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeKeys(e, keep)
		}
		return out
	}
	return v
}

// snakeCase is the npm package to-snake-case 1.0.0 (with to-space-case and
// to-no-case), which jambonz's snakecase-keys.js uses, to the letter:
//
//   - a key with JavaScript whitespace, or else one of _ - . : is only lower-cased:
//     its camelCase is not split ("user_transcriptEvent" → "user_transcriptevent",
//     "_customerData" → "customerdata");
//   - else, when a lower-case letter touches an upper-case one, each run of
//     upper-case letters after a character is split letter by letter ("toolName" →
//     "tool_name", "callSID" → "call_s_i_d", "HTTPServer" → "h_t_t_p_server");
//   - then the words are the runs of ASCII letters and digits, joined by "_": any
//     other character is a separator, non-ASCII letters included ("café" → "caf").
func snakeCase(s string) string {
	if isSnake(s) {
		return s // the payloads' own keys: no work, no allocation
	}
	return toSnakeCase(s)
}

// toSnakeCase is snakeCase without its shortcut for keys already in snake_case.
func toSnakeCase(s string) string {
	switch {
	case strings.ContainsFunc(s, isJSSpace), strings.ContainsAny(s, "_-.:"):
	case hasCamel(s):
		s = uncamelize(s)
	}
	s = jsLower(s)
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	return strings.Join(words, "_")
}

// isSnake reports whether s is already what snakeCase makes of it: lower-case ASCII
// letters and digits in words joined by single underscores.
func isSnake(s string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isJSSpace is JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

func isUpperASCII(r rune) bool { return r >= 'A' && r <= 'Z' }
func isLowerASCII(r rune) bool { return r >= 'a' && r <= 'z' }

// hasCamel is to-no-case's /([a-z][A-Z]|[A-Z][a-z])/.
func hasCamel(s string) bool {
	prev := rune(-1)
	for _, r := range s {
		if prev >= 0 && (isLowerASCII(prev) && isUpperASCII(r) || isUpperASCII(prev) && isLowerASCII(r)) {
			return true
		}
		prev = r
	}
	return false
}

// uncamelize is to-no-case's replace(/(.)([A-Z]+)/g, previous + ' ' + each upper
// letter lower-cased, spaced). The key has no line terminator (it would be
// whitespace), so . matches any character.
func uncamelize(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i := 0; i < len(r); {
		if i+1 < len(r) && isUpperASCII(r[i+1]) {
			b.WriteRune(r[i])
			j := i + 1
			for ; j < len(r) && isUpperASCII(r[j]); j++ {
				b.WriteByte(' ')
				b.WriteRune(r[j] + ('a' - 'A'))
			}
			i = j
			continue
		}
		b.WriteRune(r[i])
		i++
	}
	return b.String()
}

// jsLower is String.prototype.toLowerCase where it differs from Go's in what the
// word split sees: U+0130 (İ) becomes "i" and a combining dot, a separator.
func jsLower(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "\u0130", "i\u0307"))
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
