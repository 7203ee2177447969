package callctl

import (
	"maps"
	"strconv"
	"strings"
)

// Application holds what the call hook tells an application about itself beyond the
// call: its speech settings (the hook's defaults) and environment variables, and
// the account's service provider (docs/compatibility.md §5). The zero value is an
// application created with jambonz's defaults (google, en-US, en-US-Standard-C) and
// no env_vars.
type Application struct {
	// Synthesizer and Recognizer are the application's speech settings.
	Synthesizer, Recognizer Speech
	// EnvVars are the application's env_vars, sent as they are (absent when nil).
	EnvVars map[string]any
	// ServiceProviderSid is the account's service provider.
	ServiceProviderSid string
}

// Speech is a speech setting: vendor, language, voice (synthesizer only), label,
// and their fallbacks.
type Speech struct {
	Vendor, Language, Voice, Label                                 string
	FallbackVendor, FallbackLanguage, FallbackVoice, FallbackLabel string
}

// The defaults of an application's speech settings in jambonz's schema
// (jambonz-api-server db/jambones-sql.sql, table applications).
const (
	defaultSpeechVendor    = "google"
	defaultSpeechLanguage  = "en-US"
	defaultSpeechVoice     = "en-US-Standard-C"
	defaultServiceProvider = "2708b1b3-2736-40ea-b502-c53d8396247f"
)

// withDefaults fills the speech settings jambonz's schema requires.
func (a Application) withDefaults() Application {
	setDefault(&a.Synthesizer.Vendor, defaultSpeechVendor)
	setDefault(&a.Synthesizer.Language, defaultSpeechLanguage)
	setDefault(&a.Recognizer.Vendor, defaultSpeechVendor)
	setDefault(&a.Recognizer.Language, defaultSpeechLanguage)
	if a.Synthesizer.Vendor == defaultSpeechVendor {
		setDefault(&a.Synthesizer.Voice, defaultSpeechVoice)
	}
	setDefault(&a.ServiceProviderSid, defaultServiceProvider)
	return a
}

// defaults is the call hook's defaults object. An inbound call's
// (lib/middleware.js) carries the fallbacks that are set and no recognizer voice; an
// outbound call's (lib/tasks/rest_dial.js) carries vendor, language, voice and label.
func (a Application) defaults(inbound bool) map[string]any {
	synth := map[string]any{"vendor": a.Synthesizer.Vendor, "language": a.Synthesizer.Language}
	recog := map[string]any{"vendor": a.Recognizer.Vendor, "language": a.Recognizer.Language}
	setIf := func(m map[string]any, k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	setIf(synth, "voice", a.Synthesizer.Voice)
	setIf(synth, "label", a.Synthesizer.Label)
	setIf(recog, "label", a.Recognizer.Label)
	if inbound {
		setIf(synth, "fallback_vendor", a.Synthesizer.FallbackVendor)
		setIf(synth, "fallback_label", a.Synthesizer.FallbackLabel)
		setIf(synth, "fallback_language", a.Synthesizer.FallbackLanguage)
		setIf(synth, "fallback_voice", a.Synthesizer.FallbackVoice)
		setIf(recog, "fallback_vendor", a.Recognizer.FallbackVendor)
		setIf(recog, "fallback_label", a.Recognizer.FallbackLabel)
		setIf(recog, "fallback_language", a.Recognizer.FallbackLanguage)
	}
	return map[string]any{"synthesizer": synth, "recognizer": recog}
}

// callHookPayload is what the call hook (or session:new) carries, as jambonz builds
// it. An inbound call's (lib/middleware.js invokeWebCallback) is the INVITE (sip,
// unless the hook is a GET), the call's own properties as CallInfo holds them
// (caller_name, has_recording, local_sip_address ... but neither caller_id nor
// fs_sip_address), service_provider_sid, defaults and env_vars. An outbound
// call's (lib/tasks/rest_dial.js) is the call's fields as every later hook has them,
// with env_vars and defaults.
func (c *callRun) callHookPayload() map[string]any {
	app := c.opts.Application
	if app.EnvVars == nil {
		app.EnvVars = c.info.EnvVars
	}
	if c.info.Direction == "outbound" {
		m := c.info.fields()
		if app.EnvVars != nil {
			m["env_vars"] = maps.Clone(app.EnvVars)
		}
		m["defaults"] = app.defaults(false)
		return m
	}
	ci := &c.info
	m := map[string]any{
		"direction":            ci.Direction,
		"trace_id":             ci.TraceID,
		"has_recording":        false,
		"caller_name":          ci.CallerName,
		"call_sid":             ci.CallSid,
		"account_sid":          ci.AccountSid,
		"application_sid":      ci.ApplicationSid,
		"from":                 ci.From,
		"to":                   ci.To,
		"call_id":              ci.CallID,
		"sip_status":           ci.SipStatus,
		"sip_reason":           ci.SipReason,
		"call_status":          string(ci.CallStatus),
		"sbc_callid":           ci.SbcCallID,
		"local_sip_address":    ci.FsSipAddress,
		"service_provider_sid": app.ServiceProviderSid,
		"defaults":             app.defaults(true),
	}
	if ci.OriginatingSipIP != "" {
		m["originating_sip_ip"] = ci.OriginatingSipIP
	}
	if ci.OriginatingSipTrunkName != "" {
		m["originating_sip_trunk_name"] = ci.OriginatingSipTrunkName
	}
	if app.EnvVars != nil {
		m["env_vars"] = maps.Clone(app.EnvVars)
	}
	if c.opts.Method != "GET" {
		m["sip"] = c.invite()
	}
	return m
}

// invite is the simulated INVITE as jambonz serialises drachtio's request: its
// headers (names in lower case, as drachtio keeps them; the SBC's X- headers and the
// scenario's sip.headers among them), the SDP body, method, version and
// Request-URI.
func (c *callRun) invite() map[string]any {
	ci := &c.info
	uri := "sip:" + strings.TrimPrefix(ci.To, "+") + "@" + ci.FsSipAddress
	sdp := "v=0\r\no=- 0 0 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n"
	headers := map[string]any{
		"via":             "SIP/2.0/UDP 192.0.2.1:5060;rport;branch=z9hG4bK" + prefix(ci.CallID, 8),
		"max-forwards":    "70",
		"from":            "<sip:" + ci.From + "@192.0.2.1>;tag=" + prefix(ci.SbcCallID, 8),
		"to":              "<" + uri + ">",
		"call-id":         ci.CallID,
		"cseq":            "1 INVITE",
		"contact":         "<sip:" + ci.From + "@192.0.2.1:5060>",
		"content-type":    "application/sdp",
		"content-length":  strconv.Itoa(len(sdp)),
		"x-cid":           ci.SbcCallID,
		"x-account-sid":   ci.AccountSid,
		"x-forwarded-for": ci.OriginatingSipIP,
	}
	if ci.OriginatingSipTrunkName != "" {
		headers["x-originating-carrier"] = ci.OriginatingSipTrunkName
	}
	for k, v := range c.opts.Script.SIPHeaders {
		headers[strings.ToLower(k)] = v
	}
	return map[string]any{
		"headers": headers,
		"body":    sdp,
		"method":  "INVITE",
		"version": "2.0",
		"uri":     uri,
		"payload": []any{map[string]any{"type": "application/sdp", "content": sdp}},
	}
}

// prefix is s's first n bytes (all of s when shorter).
func prefix(s string, n int) string { return s[:min(n, len(s))] }
