package verbs

// Llm connects the caller to a speech-to-speech language model. The s2s verb and the
// vendor shortcuts (openai_s2s, google_s2s, ...) decode as an Llm, their vendor filled
// in, as jambonz's verb-specifications normalizeJambones does (Shortcuts).
type Llm struct {
	VerbID         string           `json:"id,omitempty"`
	Vendor         string           `json:"vendor,omitempty" verb:"required"`
	Model          string           `json:"model,omitempty"`
	Auth           map[string]any   `json:"auth,omitempty"`
	ConnectOptions map[string]any   `json:"connectOptions,omitempty"`
	McpServers     []map[string]any `json:"mcpServers,omitempty"`
	ActionHook     *Hook            `json:"actionHook,omitempty"`
	EventHook      *Hook            `json:"eventHook,omitempty"`
	ToolHook       *Hook            `json:"toolHook,omitempty"`
	Events         []string         `json:"events,omitempty"`
	LlmOptions     map[string]any   `json:"llmOptions,omitempty" verb:"required"`
}

// Dialogflow connects the caller to a Google Dialogflow agent.
type Dialogflow struct {
	VerbID              string         `json:"id,omitempty"`
	Credentials         any            `json:"credentials,omitempty" verb:"required,types=object|string"`
	Project             string         `json:"project,omitempty" verb:"required"`
	Agent               string         `json:"agent,omitempty"`
	Environment         string         `json:"environment,omitempty"`
	Region              string         `json:"region,omitempty"`
	Model               string         `json:"model,omitempty" verb:"enum=es|cx|ces"`
	Lang                string         `json:"lang,omitempty" verb:"required"`
	ActionHook          *Hook          `json:"actionHook,omitempty"`
	EventHook           *Hook          `json:"eventHook,omitempty"`
	Events              []string       `json:"events,omitempty"`
	WelcomeEvent        string         `json:"welcomeEvent,omitempty"`
	WelcomeEventParams  map[string]any `json:"welcomeEventParams,omitempty"`
	NoInputTimeout      float64        `json:"noInputTimeout,omitempty"`
	NoInputEvent        string         `json:"noInputEvent,omitempty"`
	PassDtmfAsTextInput bool           `json:"passDtmfAsTextInput,omitempty"`
	ThinkingMusic       string         `json:"thinkingMusic,omitempty"`
	Tts                 map[string]any `json:"tts,omitempty"`
	Bargein             bool           `json:"bargein,omitempty"`
	QueryInput          map[string]any `json:"queryInput,omitempty"`
}

// Lex connects the caller to an Amazon Lex bot.
type Lex struct {
	VerbID         string         `json:"id,omitempty"`
	BotID          string         `json:"botId,omitempty" verb:"required"`
	BotAlias       string         `json:"botAlias,omitempty" verb:"required"`
	Credentials    map[string]any `json:"credentials,omitempty" verb:"required"`
	Region         string         `json:"region,omitempty" verb:"required"`
	Locale         string         `json:"locale,omitempty"`
	Intent         map[string]any `json:"intent,omitempty"`
	WelcomeMessage string         `json:"welcomeMessage,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	Bargein        bool           `json:"bargein,omitempty"`
	PassDtmf       bool           `json:"passDtmf,omitempty"`
	ActionHook     *Hook          `json:"actionHook,omitempty"`
	EventHook      *Hook          `json:"eventHook,omitempty"`
	NoInputTimeout float64        `json:"noInputTimeout,omitempty"`
	Tts            map[string]any `json:"tts,omitempty"`
}

// Rasa connects the caller to a Rasa assistant over its REST channel.
type Rasa struct {
	VerbID     string         `json:"id,omitempty"`
	URL        string         `json:"url,omitempty" verb:"required"`
	Recognizer map[string]any `json:"recognizer,omitempty"`
	Tts        map[string]any `json:"tts,omitempty"`
	Prompt     string         `json:"prompt,omitempty"`
	ActionHook *Hook          `json:"actionHook,omitempty"`
	EventHook  *Hook          `json:"eventHook,omitempty"`
}

// RestDial is the verb a REST-created call runs first: it places the outbound call
// and, once answered, requests CallHook (jambonz lib/tasks/rest_dial.js).
type RestDial struct {
	VerbID                     string            `json:"id,omitempty"`
	AccountSid                 string            `json:"account_sid,omitempty"`
	ApplicationSid             string            `json:"application_sid,omitempty"`
	CallHook                   *Hook             `json:"call_hook,omitempty" verb:"required"`
	CallStatusHook             *Hook             `json:"call_status_hook,omitempty"`
	From                       string            `json:"from,omitempty" verb:"required"`
	CallerName                 string            `json:"callerName,omitempty"`
	FromHost                   string            `json:"fromHost,omitempty"`
	SpeechSynthesisVendor      string            `json:"speech_synthesis_vendor,omitempty"`
	SpeechSynthesisVoice       string            `json:"speech_synthesis_voice,omitempty"`
	SpeechSynthesisLanguage    string            `json:"speech_synthesis_language,omitempty"`
	SpeechRecognizerVendor     string            `json:"speech_recognizer_vendor,omitempty"`
	SpeechRecognizerLanguage   string            `json:"speech_recognizer_language,omitempty"`
	Tag                        map[string]any    `json:"tag,omitempty"`
	To                         *DialTarget       `json:"to,omitempty" verb:"required"`
	Headers                    map[string]string `json:"headers,omitempty"`
	Timeout                    float64           `json:"timeout,omitempty"`
	Amd                        *Amd              `json:"amd,omitempty"`
	DualStreams                bool              `json:"dual_streams,omitempty"`
	SipRequestWithinDialogHook string            `json:"sipRequestWithinDialogHook,omitempty"`
	ReferHook                  *Hook             `json:"referHook,omitempty"`
	TimeLimit                  float64           `json:"timeLimit,omitempty"`
}

// Name returns "dialogflow".
func (v *Dialogflow) Name() string { return "dialogflow" }

// Name returns "lex".
func (v *Lex) Name() string { return "lex" }

// Name returns "rasa".
func (v *Rasa) Name() string { return "rasa" }

// Name returns "rest:dial".
func (v *RestDial) Name() string { return "rest:dial" }

// shortcut is what a verb alias decodes as: the canonical verb, and the vendor it
// fills in when the verb's own data names none.
type shortcut struct{ verb, vendor string }

// shortcuts are jambonz's verb synonyms and vendor shortcuts (verb-specifications
// 0.1.13 jambonz-app-json-validation.js, verbTransforms): {"verb":"openai_s2s",...}
// is {"verb":"llm","vendor":"openai",...}, a vendor of the verb's own winning.
var shortcuts = map[string]shortcut{
	"stream":         {verb: "listen"},
	"s2s":            {verb: "llm"},
	"openai_s2s":     {verb: "llm", vendor: "openai"},
	"microsoft_s2s":  {verb: "llm", vendor: "microsoft"},
	"google_s2s":     {verb: "llm", vendor: "google"},
	"elevenlabs_s2s": {verb: "llm", vendor: "elevenlabs"},
	"deepgram_s2s":   {verb: "llm", vendor: "deepgram"},
	"voiceagent_s2s": {verb: "llm", vendor: "voiceagent"},
	"ultravox_s2s":   {verb: "llm", vendor: "ultravox"},
}

// Canonical returns the verb a name runs as: "llm" for "s2s" and the vendor
// shortcuts, "listen" for "stream", the name itself otherwise.
func Canonical(name string) string {
	if s, ok := shortcuts[name]; ok {
		return s.verb
	}
	return name
}

// normalize applies a shortcut to a verb's name and properties.
func normalize(name string, props []member) (string, []member) {
	s, ok := shortcuts[name]
	if !ok {
		return name, props
	}
	if s.vendor != "" {
		if _, given := lookup(props, "vendor"); !given {
			props = append(append([]member(nil), props...), member{key: "vendor", val: []byte(`"` + s.vendor + `"`)})
		}
	}
	return s.verb, props
}

// llmVendorRules are what jambonz's vendor-specific llm tasks require when they are
// built (lib/tasks/llm/index.js createSpecificLlm and the constructors in
// lib/tasks/llm/llms/*.js): a verb that lacks one fails to build there, so the
// application's verbs are refused.
func (v *Llm) finish() (field, reason string) {
	str := func(m map[string]any, k string) bool {
		s, ok := m[k].(string)
		return ok && s != ""
	}
	obj := func(m map[string]any, k string) map[string]any {
		o, _ := m[k].(map[string]any)
		return o
	}
	switch v.Vendor {
	case "openai", "microsoft":
		if !str(v.Auth, "apiKey") {
			return "auth.apiKey", "required for OpenAI S2S"
		}
		if v.Vendor == "microsoft" && !str(v.ConnectOptions, "host") {
			return "connectOptions.host", "required for Microsoft OpenAI S2S"
		}
		if obj(v.LlmOptions, "response_create") == nil {
			return "llmOptions.response_create", "an initial response.create object is required for OpenAI S2S"
		}
	case "voiceagent", "deepgram":
		if !str(v.Auth, "apiKey") {
			return "auth.apiKey", "required for VoiceAgent S2S"
		}
		settings := obj(v.LlmOptions, "Settings")
		if settings == nil {
			return "llmOptions.Settings", "an initial Settings object is required for VoiceAgent S2S"
		}
		agent := obj(settings, "agent")
		if agent == nil {
			return "llmOptions.Settings.agent", "required for VoiceAgent S2S"
		}
		think := obj(agent, "think")
		if think == nil {
			return "llmOptions.Settings.agent.think", "required for VoiceAgent S2S"
		}
		provider := obj(think, "provider")
		if provider == nil || provider["model"] == nil || provider["model"] == "" {
			return "llmOptions.Settings.agent.think.provider.model", "required for VoiceAgent S2S"
		}
		if provider["type"] == nil || provider["type"] == "" {
			return "llmOptions.Settings.agent.think.provider.type", "required for VoiceAgent S2S"
		}
	case "ultravox":
		if !str(v.Auth, "apiKey") {
			return "auth.apiKey", "required for Vendor: Ultravox"
		}
	case "elevenlabs":
		if !str(v.Auth, "agent_id") {
			return "auth.agent_id", "required for Elevenlabs S2S"
		}
	case "google":
		if !str(v.Auth, "apiKey") {
			return "auth.apiKey", "required for Google S2S"
		}
		if obj(v.LlmOptions, "setup") == nil {
			return "llmOptions.setup", "an initial setup object is required for Google S2S"
		}
	default:
		return "vendor", "unsupported vendor " + v.Vendor + " for LLM (jambonz 0.9.8 has openai, microsoft, google, elevenlabs, deepgram, voiceagent, ultravox)"
	}
	return "", ""
}
