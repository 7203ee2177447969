package exampleapp

import "strings"

// Verbs are JSON-ready: the shape a jambonz app returns.
type verb = map[string]any

// welcome is the call's first document: greet, then ask for a digit or speech.
func welcome(gatherHook string) []verb {
	return []verb{
		{"verb": "say", "text": "Welcome to Switchboard."},
		{"verb": "gather", "input": []string{"digits", "speech"}, "numDigits": 1, "timeout": 5,
			"actionHook": gatherHook,
			"say":        verb{"text": "Press 1 for sales, 2 for support, or say what you need."}},
		{"verb": "say", "text": "We did not get your answer."},
		{"verb": "hangup"},
	}
}

// answer is the document for a gather result (the fields jambonz posts).
func answer(reason, digits, transcript string) []verb {
	var said string
	switch {
	case reason == "dtmfDetected" && digits == "1":
		said = "Connecting you to sales."
	case reason == "dtmfDetected" && digits == "2":
		said = "Connecting you to support."
	case reason == "dtmfDetected":
		said = "You pressed " + digits + "."
	case reason == "speechDetected":
		said = "You said: " + strings.TrimSpace(transcript) + "."
	default:
		return []verb{{"verb": "say", "text": "Sorry, we did not hear you. Goodbye."}, {"verb": "hangup"}}
	}
	return []verb{
		{"verb": "say", "text": said},
		{"verb": "pause", "length": 1},
		{"verb": "say", "text": "Thank you for calling. Goodbye."},
		{"verb": "hangup"},
	}
}

// gatherResult extracts reason, digits and the first transcript from a gather
// actionHook payload.
func gatherResult(p map[string]any) (reason, digits, transcript string) {
	reason, _ = p["reason"].(string)
	digits, _ = p["digits"].(string)
	if sp, ok := p["speech"].(map[string]any); ok {
		if alts, ok := sp["alternatives"].([]any); ok && len(alts) > 0 {
			if a, ok := alts[0].(map[string]any); ok {
				transcript, _ = a["transcript"].(string)
			}
		}
	}
	return reason, digits, transcript
}
