package verbs

// Dial bridges the call to one or more targets (the first to answer wins).
type Dial struct {
	VerbID         string       `json:"id,omitempty"`
	Target         []DialTarget `json:"target,omitempty" verb:"required"`
	ActionHook     *Hook        `json:"actionHook,omitempty"`
	ConfirmHook    *Hook        `json:"confirmHook,omitempty"`
	DtmfHook       *Hook        `json:"dtmfHook,omitempty"`
	OnHoldHook     *Hook        `json:"onHoldHook,omitempty"`
	ReferHook      *Hook        `json:"referHook,omitempty"`
	CallerID       string       `json:"callerId,omitempty"`
	CallerName     string       `json:"callerName,omitempty"`
	AnswerOnBridge bool         `json:"answerOnBridge,omitempty"`
	DialMusic      string       `json:"dialMusic,omitempty"`
	// DtmfCapture is a list of patterns, or {"childCall": [...], "parentCall": [...]}.
	DtmfCapture      any               `json:"dtmfCapture,omitempty" verb:"types=object|array"`
	Headers          map[string]string `json:"headers,omitempty"`
	AnchorMedia      bool              `json:"anchorMedia,omitempty"`
	ExitMediaPath    bool              `json:"exitMediaPath,omitempty"`
	BoostAudioSignal any               `json:"boostAudioSignal,omitempty" verb:"types=number|string"`
	Listen           *Listen           `json:"listen,omitempty"`
	Stream           *Listen           `json:"stream,omitempty"`
	TimeLimit        float64           `json:"timeLimit,omitempty"` // seconds
	Timeout          float64           `json:"timeout,omitempty"`   // seconds of ringing
	Proxy            string            `json:"proxy,omitempty"`
	Transcribe       *Transcribe       `json:"transcribe,omitempty"`
	Amd              *Amd              `json:"amd,omitempty"`
	Dub              []*Dub            `json:"dub,omitempty"`
	Tag              map[string]any    `json:"tag,omitempty"`
	ForwardPAI       bool              `json:"forwardPAI,omitempty"`
	Codecs           []string          `json:"codecs,omitempty"`
}

// DialTarget is one endpoint a dial rings.
type DialTarget struct {
	Type        string            `json:"type,omitempty" verb:"required,enum=phone|sip|user|teams"`
	Number      string            `json:"number,omitempty"`
	SipURI      string            `json:"sipUri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Tenant      string            `json:"tenant,omitempty"`
	Trunk       string            `json:"trunk,omitempty"`
	Auth        map[string]any    `json:"auth,omitempty"`
	ConfirmHook *Hook             `json:"confirmHook,omitempty"`
	Method      string            `json:"method,omitempty" verb:"enum=GET|POST"`
	Headers     map[string]string `json:"headers,omitempty"`
	From        map[string]any    `json:"from,omitempty"`
	Vmail       bool              `json:"vmail,omitempty"`
	OverrideTo  string            `json:"overrideTo,omitempty"`
	Proxy       string            `json:"proxy,omitempty"`
}

// finish enforces the address property each target type needs, which jambonz
// otherwise only discovers when it places the call.
func (t *DialTarget) finish() (field, reason string) {
	switch t.Type {
	case "phone", "teams":
		if t.Number == "" {
			return "number", "required for type " + t.Type
		}
	case "sip":
		if t.SipURI == "" {
			return "sipUri", "required for type sip"
		}
	case "user":
		if t.Name == "" {
			return "name", "required for type user"
		}
	}
	return "", ""
}

// Conference puts the call into a named conference room.
type Conference struct {
	VerbID         string `json:"id,omitempty"`
	ConferenceName string `json:"name,omitempty" verb:"required"` // Name is the Verb method
	Beep           bool   `json:"beep,omitempty"`
	MemberTag      string `json:"memberTag,omitempty"`
	SpeakOnlyTo    string `json:"speakOnlyTo,omitempty"`
	// StartConferenceOnEnter: absent starts the conference as false would not (jambonz
	// waits for a moderator only when it is false).
	StartConferenceOnEnter *bool          `json:"startConferenceOnEnter,omitempty"`
	EndConferenceOnExit    bool           `json:"endConferenceOnExit,omitempty"`
	EndConferenceDuration  float64        `json:"endConferenceDuration,omitempty"`
	MaxParticipants        int            `json:"maxParticipants,omitempty"`
	JoinMuted              bool           `json:"joinMuted,omitempty"`
	ActionHook             *Hook          `json:"actionHook,omitempty"`
	WaitHook               *Hook          `json:"waitHook,omitempty"`
	StatusHook             *Hook          `json:"statusHook,omitempty"`
	EnterHook              *Hook          `json:"enterHook,omitempty"`
	StatusEvents           []string       `json:"statusEvents,omitempty"`
	Record                 map[string]any `json:"record,omitempty"`
	Listen                 map[string]any `json:"listen,omitempty"`
	DistributeDtmf         bool           `json:"distributeDtmf,omitempty"`
}

// Enqueue places the call in a named queue.
type Enqueue struct {
	VerbID     string         `json:"id,omitempty"`
	QueueName  string         `json:"name,omitempty" verb:"required"` // Name is the Verb method
	ActionHook *Hook          `json:"actionHook,omitempty"`
	WaitHook   *Hook          `json:"waitHook,omitempty"`
	Priority   int            `json:"priority,omitempty"`
	Extra      map[string]any `json:"_,omitempty"` // free-form data jambonz carries along (e.g. on transfer)
}

// Dequeue takes a call out of a named queue and bridges it.
type Dequeue struct {
	VerbID     string  `json:"id,omitempty"`
	QueueName  string  `json:"name,omitempty" verb:"required"` // Name is the Verb method
	ActionHook *Hook   `json:"actionHook,omitempty"`
	Timeout    float64 `json:"timeout,omitempty"`
	Beep       bool    `json:"beep,omitempty"`
	CallSid    string  `json:"callSid,omitempty"`
}
