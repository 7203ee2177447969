package verbs

import "fmt"

// Limits on what Decode accepts, so that a hostile or broken application cannot make
// the node spend unbounded memory or time on one payload.
const (
	// MaxPayloadBytes is the largest document Decode reads: the HTTP response cap of
	// docs/call-control.md §3.
	MaxPayloadBytes = 1 << 20
	// MaxNesting is the deepest nesting of arrays and objects accepted; real payloads
	// (recognizer options, LLM tool schemas) stay well below it.
	MaxNesting = 64
	// MaxVerbs is the most verbs one array may hold.
	MaxVerbs = 1000
)

// checkBounds rejects data that is too large or nested too deeply before any JSON
// decoding, in one pass over the bytes.
func checkBounds(data []byte, index int) error {
	if len(data) > MaxPayloadBytes {
		return &ValidationError{Index: index, Reason: fmt.Sprintf("payload of %d bytes exceeds the limit of %d", len(data), MaxPayloadBytes)}
	}
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > MaxNesting {
				return &ValidationError{Index: index, Reason: fmt.Sprintf("nesting deeper than %d levels", MaxNesting)}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
