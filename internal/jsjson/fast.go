package jsjson

import (
	"strconv"
	"unicode/utf8"
)

// rewrite turns compact JSON as encoding/json writes it (without HTML escaping) into
// JSON.stringify's form in one pass: string escapes JavaScript does not write
// (\u2028, \u2029, \ufffd, \/, \u0041 ...) become the characters, and numbers are
// rewritten as JavaScript writes them. It reports false, and the caller takes the
// slow path (Stringify), when an object has an array-index key, which JavaScript
// orders first. src must be valid compact JSON.
func rewrite(src []byte) ([]byte, bool) {
	out := make([]byte, 0, len(src)+8)
	var stack []byte
	key := false // the next string is an object key
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '"':
			start := len(out)
			var ok bool
			out, i, ok = appendJSString(out, src, i)
			if !ok {
				return nil, false
			}
			if key {
				if _, idx := arrayIndex(string(out[start+1 : len(out)-1])); idx {
					return nil, false
				}
				key = false
			}
		case c == '{' || c == '[':
			stack = append(stack, c)
			key = c == '{'
			out = append(out, c)
			i++
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			key = false
			out = append(out, c)
			i++
		case c == ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
			out = append(out, c)
			i++
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(src) && isNumberByte(src[j]) {
				j++
			}
			out = appendJSNumber(out, src[i:j])
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out, true
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// appendJSNumber keeps an integer JavaScript writes the same way (at most 15 digits,
// not -0) and rewrites any other number through jsNumber.
func appendJSNumber(out, text []byte) []byte {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	simple := len(digits) > 0 && len(digits) <= 15 && string(text) != "-0"
	for _, d := range digits {
		simple = simple && d >= '0' && d <= '9'
	}
	if simple {
		return append(out, text...)
	}
	return append(out, jsNumber(string(text))...)
}

// appendJSString copies the string starting at src[i] (its opening quote) as
// JSON.stringify writes it and returns the index after its closing quote.
func appendJSString(out, src []byte, i int) ([]byte, int, bool) {
	out = append(out, '"')
	i++
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return append(out, '"'), i + 1, true
		case c >= utf8.RuneSelf:
			// Invalid UTF-8 (a RawMessage may hold it) reads as U+FFFD, as a JavaScript
			// string decoded from these bytes would.
			r, size := utf8.DecodeRune(src[i:])
			out = utf8.AppendRune(out, r)
			i += size
			continue
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return nil, 0, false
		}
		switch e := src[i+1]; e {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			out = append(out, '\\', e)
			i += 2
		case '/':
			out = append(out, '/')
			i += 2
		case 'u':
			r, ok := hex4(src, i+2)
			if !ok {
				return nil, 0, false
			}
			i += 6
			if r >= 0xD800 && r < 0xDC00 {
				if lo, ok := hex4(src, i+2); ok && i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
					out = utf8.AppendRune(out, 0x10000+(r-0xD800)<<10+(lo-0xDC00))
					i += 6
					continue
				}
			}
			out = appendJSRune(out, r)
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// appendJSRune writes one character of a string as JSON.stringify does: the short
// escapes, \u00xx for other control characters, \uxxxx for a lone surrogate, the
// character itself otherwise.
func appendJSRune(out []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(out, '\\', byte(r))
	case r == '\b':
		return append(out, '\\', 'b')
	case r == '\f':
		return append(out, '\\', 'f')
	case r == '\n':
		return append(out, '\\', 'n')
	case r == '\r':
		return append(out, '\\', 'r')
	case r == '\t':
		return append(out, '\\', 't')
	case r < 0x20 || (r >= 0xD800 && r < 0xE000):
		return append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	return utf8.AppendRune(out, r)
}

func hex4(src []byte, at int) (rune, bool) {
	if at+4 > len(src) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(src[at:at+4]), 16, 16)
	return rune(n), err == nil
}
