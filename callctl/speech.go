package callctl

// What the caller says reaches the application as jambonz's recognizers report it
// (docs/compatibility.md §8): lib/utils/transcription-utils.js normalizeTranscription
// gives every vendor's result the same shape, with the vendor's name and its raw
// event under vendor.

// recognizer is the session's speech recognizer (CallSession speechRecognizerVendor
// and speechRecognizerLanguage): the application's, then the config verb's.
type recognizer struct{ vendor, language string }

// setRecognizer takes a config verb's recognizer: the vendor and language it names
// become the session's ("default" keeps the session's, as lib/tasks/config.js does).
func (c *callRun) setRecognizer(r map[string]any) {
	if v := speechSetting(r, "vendor"); v != "" {
		c.recognizer.vendor = v
	}
	if l := speechSetting(r, "language"); l != "" {
		c.recognizer.language = l
	}
}

// recognizerFor is the vendor and language a verb's recognizer resolves to: its own,
// unless absent or "default", else the session's (lib/tasks/stt-task.js).
func (c *callRun) recognizerFor(r map[string]any) recognizer {
	out := c.recognizer
	if out.vendor == "" {
		out = recognizer{c.opts.Application.Recognizer.Vendor, c.opts.Application.Recognizer.Language}
	}
	if v := speechSetting(r, "vendor"); v != "" {
		out.vendor = v
	}
	if l := speechSetting(r, "language"); l != "" {
		out.language = l
	}
	return out
}

// speechSetting is r's key when it names something other than "default".
func speechSetting(r map[string]any, key string) string {
	s, _ := r[key].(string)
	if s == "default" {
		return ""
	}
	return s
}

// speechEvent is a recognition of words by rec, as normalizeTranscription reports it:
// language_code, channel_tag (1, the caller, for a gather and a transcribe of the
// caller), is_final, the best alternative, and vendor with the vendor's name and its
// raw event. The raw event is the shape google's recognizer gives, whatever the
// vendor: the vendors' own events are not simulated.
func speechEvent(rec recognizer, words string, final bool, confidence float64) map[string]any {
	alternatives := []any{map[string]any{"transcript": words, "confidence": confidence}}
	return map[string]any{
		"language_code": rec.language, "channel_tag": 1, "is_final": final, "alternatives": alternatives,
		"vendor": map[string]any{"name": rec.vendor, "evt": map[string]any{
			"is_final": final, "language_code": rec.language,
			"alternatives": []any{map[string]any{"transcript": words, "confidence": confidence}},
		}},
	}
}
