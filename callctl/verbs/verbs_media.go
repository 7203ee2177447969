package verbs

// LoopForever is the Loop value of a say or play that repeats until interrupted
// (the JSON string "forever").
const LoopForever = -1

// Say speaks text (simulated).
type Say struct {
	VerbID             string         `json:"id,omitempty"`
	Text               []string       `json:"text,omitempty" verb:"list"`
	Instructions       string         `json:"instructions,omitempty"`
	Stream             bool           `json:"stream,omitempty"`
	Loop               int            `json:"loop,omitempty" verb:"loop"`
	Synthesizer        map[string]any `json:"synthesizer,omitempty"`
	EarlyMedia         bool           `json:"earlyMedia,omitempty"`
	DisableTtsCache    bool           `json:"disableTtsCache,omitempty"`
	CloseStreamOnEmpty *bool          `json:"closeStreamOnEmpty,omitempty"` // nil when absent: jambonz ignores it either way (ignored.go)
}

// Play plays audio files (simulated).
type Play struct {
	VerbID      string   `json:"id,omitempty"`
	URL         []string `json:"url,omitempty" verb:"list,required"`
	Loop        int      `json:"loop,omitempty" verb:"loop"`
	EarlyMedia  bool     `json:"earlyMedia,omitempty"`
	SeekOffset  float64  `json:"seekOffset,omitempty" verb:"numstr"`
	TimeoutSecs float64  `json:"timeoutSecs,omitempty" verb:"numstr"`
	ActionHook  *Hook    `json:"actionHook,omitempty"`
}

// Gather collects digits or speech from the caller and reports them to ActionHook.
type Gather struct {
	VerbID            string   `json:"id,omitempty"`
	Input             []string `json:"input,omitempty" verb:"enum=digits|speech"`
	ActionHook        *Hook    `json:"actionHook,omitempty"`
	PartialResultHook *Hook    `json:"partialResultHook,omitempty"`
	FinishOnKey       string   `json:"finishOnKey,omitempty"`
	NumDigits         int      `json:"numDigits,omitempty"`
	MinDigits         int      `json:"minDigits,omitempty"`
	MaxDigits         int      `json:"maxDigits,omitempty"`
	InterDigitTimeout float64  `json:"interDigitTimeout,omitempty"`
	SpeechTimeout     float64  `json:"speechTimeout,omitempty"`
	// Timeout is in seconds; 0 is no timeout, nil the default (15 s).
	Timeout               *float64       `json:"timeout,omitempty"`
	ListenDuringPrompt    bool           `json:"listenDuringPrompt,omitempty"`
	DtmfBargein           bool           `json:"dtmfBargein,omitempty"`
	Bargein               bool           `json:"bargein,omitempty"`
	MinBargeinWordCount   int            `json:"minBargeinWordCount,omitempty"`
	Recognizer            map[string]any `json:"recognizer,omitempty"`
	Say                   *Say           `json:"say,omitempty"`
	Play                  *Play          `json:"play,omitempty"`
	FillerNoise           map[string]any `json:"fillerNoise,omitempty"`
	ActionHookDelayAction map[string]any `json:"actionHookDelayAction,omitempty"`
}

// Dub adds or drives an extra audio track mixed into the call.
type Dub struct {
	VerbID string `json:"id,omitempty"`
	Action string `json:"action,omitempty" verb:"required,enum=addTrack|removeTrack|silenceTrack|playOnTrack|sayOnTrack"`
	Track  string `json:"track,omitempty" verb:"required"`
	Play   string `json:"play,omitempty"`
	Say    any    `json:"say,omitempty" verb:"types=string|object"`
	Loop   bool   `json:"loop,omitempty"`
	Gain   any    `json:"gain,omitempty" verb:"types=number|string"`
}

// Dtmf sends DTMF digits into the call.
type Dtmf struct {
	VerbID   string  `json:"id,omitempty"`
	Dtmf     string  `json:"dtmf,omitempty" verb:"required"`
	Duration float64 `json:"duration,omitempty"`
}

// Pause waits Length seconds.
type Pause struct {
	VerbID string  `json:"id,omitempty"`
	Length float64 `json:"length,omitempty" verb:"required"`
}

// Listen streams the call's audio to a WebSocket URL ("stream" is its alias).
type Listen struct {
	VerbID                    string         `json:"id,omitempty"`
	URL                       string         `json:"url,omitempty" verb:"required"`
	ActionHook                *Hook          `json:"actionHook,omitempty"`
	Auth                      map[string]any `json:"auth,omitempty"`
	WsAuth                    map[string]any `json:"wsAuth,omitempty"`
	FinishOnKey               string         `json:"finishOnKey,omitempty"`
	MaxLength                 float64        `json:"maxLength,omitempty"`
	Metadata                  map[string]any `json:"metadata,omitempty"`
	MixType                   string         `json:"mixType,omitempty" verb:"enum=mono|stereo|mixed"`
	PassDtmf                  bool           `json:"passDtmf,omitempty"`
	PlayBeep                  bool           `json:"playBeep,omitempty"`
	DisableBidirectionalAudio bool           `json:"disableBidirectionalAudio,omitempty"`
	BidirectionalAudio        map[string]any `json:"bidirectionalAudio,omitempty"`
	SampleRate                int            `json:"sampleRate,omitempty"`
	Timeout                   float64        `json:"timeout,omitempty"`
	Transcribe                *Transcribe    `json:"transcribe,omitempty"`
	EarlyMedia                bool           `json:"earlyMedia,omitempty"`
	Channel                   int            `json:"channel,omitempty"`
}

// Transcribe transcribes the call's audio and reports to TranscriptionHook.
type Transcribe struct {
	VerbID            string         `json:"id,omitempty"`
	TranscriptionHook *Hook          `json:"transcriptionHook,omitempty" verb:"string"`
	TranslationHook   *Hook          `json:"translationHook,omitempty" verb:"string"`
	Recognizer        map[string]any `json:"recognizer,omitempty"`
	EarlyMedia        bool           `json:"earlyMedia,omitempty"`
	Channel           int            `json:"channel,omitempty"`
	Enable            bool           `json:"enable,omitempty"`
}
