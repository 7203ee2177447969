package testkit

import "maps"

// InlineSpeech are the speech settings jambonz's API requires of a call created with
// an inline call_hook rather than an application_sid (jambonz-api-server
// validateCreateCall answers 400 without any of them).
var InlineSpeech = map[string]any{
	"speech_synthesis_vendor": "google", "speech_synthesis_language": "en-US", "speech_synthesis_voice": "en-US-Standard-C",
	"speech_recognizer_vendor": "google", "speech_recognizer_language": "en-US",
}

// WithSpeech returns a create-call body with InlineSpeech added to body (which it
// changes), for a call created with an inline call_hook.
func WithSpeech(body map[string]any) map[string]any {
	maps.Copy(body, InlineSpeech)
	return body
}
