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
	VerbID                     string             `json:"id,omitempty"`
	Synthesizer                map[string]any     `json:"synthesizer,omitempty"`
	Recognizer                 map[string]any     `json:"recognizer,omitempty"`
	BargeIn                    *BargeIn           `json:"bargeIn,omitempty"`
	TtsStream                  *TtsStream         `json:"ttsStream,omitempty"`
	Record                     map[string]any     `json:"record,omitempty"`
	Listen                     map[string]any     `json:"listen,omitempty"`
	Stream                     map[string]any     `json:"stream,omitempty"`
	Transcribe                 *TranscribeOptions `json:"transcribe,omitempty"`
	Amd                        *Amd               `json:"amd,omitempty"`
	TrackTtsPlayout            bool               `json:"trackTtsPlayout,omitempty"`
	NoiseIsolation             map[string]any     `json:"noiseIsolation,omitempty"`
	TurnTaking                 map[string]any     `json:"turnTaking,omitempty"`
	FillerNoise                map[string]any     `json:"fillerNoise,omitempty"`
	Vad                        map[string]any     `json:"vad,omitempty"`
	ActionHookDelayAction      map[string]any     `json:"actionHookDelayAction,omitempty"`
	NotifyEvents               bool               `json:"notifyEvents,omitempty"`
	NotifySttLatency           bool               `json:"notifySttLatency,omitempty"`
	Reset                      []string           `json:"reset,omitempty" verb:"list"`
	OnHoldMusic                string             `json:"onHoldMusic,omitempty"`
	SipRequestWithinDialogHook *Hook              `json:"sipRequestWithinDialogHook,omitempty"`
	ReferHook                  *Hook              `json:"referHook,omitempty"`
	BoostAudioSignal           any                `json:"boostAudioSignal,omitempty" verb:"types=number|string"`
	EarlyMedia                 bool               `json:"earlyMedia,omitempty"`
	AutoStreamTts              *bool              `json:"autoStreamTts,omitempty"`
	DisableTtsCache            bool               `json:"disableTtsCache,omitempty"`
}

// BargeIn (config.bargeIn) runs a background gather while later verbs play: what the
// caller says or keys goes to its ActionHook, whose verbs replace the remaining ones
// (jambonz lib/tasks/config.js, lib/utils/background-task-manager.js).
type BargeIn struct {
	Enable              bool     `json:"enable" verb:"required"`
	Sticky              bool     `json:"sticky,omitempty"`
	ActionHook          *Hook    `json:"actionHook,omitempty"`
	PartialResultHook   *Hook    `json:"partialResultHook,omitempty"`
	Input               []string `json:"input,omitempty" verb:"enum=digits|speech"`
	FinishOnKey         string   `json:"finishOnKey,omitempty"`
	NumDigits           int      `json:"numDigits,omitempty"`
	MinDigits           int      `json:"minDigits,omitempty"`
	MaxDigits           int      `json:"maxDigits,omitempty"`
	InterDigitTimeout   float64  `json:"interDigitTimeout,omitempty"`
	DtmfBargein         bool     `json:"dtmfBargein,omitempty"`
	MinBargeinWordCount int      `json:"minBargeinWordCount,omitempty"`
}

// TtsStream (config.ttsStream) opens a background streaming say: the application's
// tts:tokens are spoken as they come, whatever verb runs.
type TtsStream struct {
	Enable      bool           `json:"enable" verb:"required"`
	Synthesizer map[string]any `json:"synthesizer,omitempty"`
}

// TranscribeOptions (config.transcribe) starts or stops a background transcription.
type TranscribeOptions struct {
	Enable            bool           `json:"enable" verb:"required"`
	TranscriptionHook *Hook          `json:"transcriptionHook,omitempty" verb:"string"`
	Recognizer        map[string]any `json:"recognizer,omitempty"`
}

// Amd is answering machine detection (config.amd, dial.amd, rest:dial.amd): its
// ActionHook receives the amd_* events.
type Amd struct {
	ActionHook         *Hook          `json:"actionHook,omitempty" verb:"required"`
	ThresholdWordCount int            `json:"thresholdWordCount,omitempty"`
	DigitCount         int            `json:"digitCount,omitempty"`
	Timers             map[string]any `json:"timers,omitempty"`
	Recognizer         map[string]any `json:"recognizer,omitempty"`
}
