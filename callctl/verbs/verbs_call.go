package verbs

// Answer answers the call.
type Answer struct {
	VerbID string `json:"id,omitempty"`
}

// Alert raises an application alert on the account carrying Message (jambonz's
// lib/tasks/alert.js; the SDKs describe it as a 180 with Alert-Info, which the code
// does not send).
type Alert struct {
	VerbID  string `json:"id,omitempty"`
	Message string `json:"message,omitempty" verb:"required"`
}

// Hangup ends the call.
type Hangup struct {
	VerbID  string            `json:"id,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Redirect replaces the remaining verbs with those returned by ActionHook.
type Redirect struct {
	VerbID     string `json:"id,omitempty"`
	ActionHook *Hook  `json:"actionHook,omitempty" verb:"required"`
	// StatusHook (jambonz schema) moves status notifications; kept as given.
	StatusHook any `json:"statusHook,omitempty" verb:"types=string|object"`
}

// Tag attaches Data to the call; later hooks carry it as customerData.
type Tag struct {
	VerbID string         `json:"id,omitempty"`
	Data   map[string]any `json:"data,omitempty" verb:"required"`
}

// SipDecline rejects the call with a SIP status.
type SipDecline struct {
	VerbID  string            `json:"id,omitempty"`
	Status  int               `json:"status,omitempty" verb:"required"`
	Reason  string            `json:"reason,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// SipRefer transfers the call with a SIP REFER.
type SipRefer struct {
	VerbID                string            `json:"id,omitempty"`
	ReferTo               string            `json:"referTo,omitempty" verb:"required"`
	ReferredBy            string            `json:"referredBy,omitempty"`
	ReferredByDisplayName string            `json:"referredByDisplayName,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	ActionHook            *Hook             `json:"actionHook,omitempty"`
	EventHook             *Hook             `json:"eventHook,omitempty"`
}

// SipRequest sends a SIP request (INFO, NOTIFY, MESSAGE) within the dialog.
type SipRequest struct {
	VerbID     string            `json:"id,omitempty"`
	Method     string            `json:"method,omitempty" verb:"required"`
	Body       string            `json:"body,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	ActionHook *Hook             `json:"actionHook,omitempty"`
}

// Leave takes the call out of a queue or conference.
type Leave struct {
	VerbID string `json:"id,omitempty"`
}

// Message sends an SMS.
type Message struct {
	VerbID     string   `json:"id,omitempty"`
	To         string   `json:"to,omitempty" verb:"required"`
	From       string   `json:"from,omitempty" verb:"required"`
	Text       string   `json:"text,omitempty"`
	Media      []string `json:"media,omitempty" verb:"list"`
	Carrier    string   `json:"carrier,omitempty"`
	AccountSid string   `json:"account_sid,omitempty"`
	MessageSid string   `json:"message_sid,omitempty"`
	ActionHook *Hook    `json:"actionHook,omitempty"`
}

// Config changes session defaults (speech vendors, barge-in, recording, ...).
type Config struct {
	VerbID                     string         `json:"id,omitempty"`
	Synthesizer                map[string]any `json:"synthesizer,omitempty"`
	Recognizer                 map[string]any `json:"recognizer,omitempty"`
	Bargein                    map[string]any `json:"bargeIn,omitempty"`
	TtsStream                  map[string]any `json:"ttsStream,omitempty"`
	Record                     map[string]any `json:"record,omitempty"`
	Listen                     map[string]any `json:"listen,omitempty"`
	Stream                     map[string]any `json:"stream,omitempty"`
	Transcribe                 map[string]any `json:"transcribe,omitempty"`
	Amd                        map[string]any `json:"amd,omitempty"`
	TrackTtsPlayout            bool           `json:"trackTtsPlayout,omitempty"`
	NoiseIsolation             map[string]any `json:"noiseIsolation,omitempty"`
	TurnTaking                 map[string]any `json:"turnTaking,omitempty"`
	FillerNoise                map[string]any `json:"fillerNoise,omitempty"`
	Vad                        map[string]any `json:"vad,omitempty"`
	ActionHookDelayAction      map[string]any `json:"actionHookDelayAction,omitempty"`
	NotifyEvents               bool           `json:"notifyEvents,omitempty"`
	NotifySttLatency           bool           `json:"notifySttLatency,omitempty"`
	Reset                      []string       `json:"reset,omitempty" verb:"list"`
	OnHoldMusic                string         `json:"onHoldMusic,omitempty"`
	SipRequestWithinDialogHook *Hook          `json:"sipRequestWithinDialogHook,omitempty"`
	ReferHook                  *Hook          `json:"referHook,omitempty"`
	BoostAudioSignal           any            `json:"boostAudioSignal,omitempty" verb:"types=number|string"`
	EarlyMedia                 bool           `json:"earlyMedia,omitempty"`
	AutoStreamTts              bool           `json:"autoStreamTts,omitempty"`
	DisableTtsCache            bool           `json:"disableTtsCache,omitempty"`
}

// Llm connects the caller to a speech-to-speech language model.
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
