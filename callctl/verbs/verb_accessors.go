package verbs

// The ID and Hooks methods are identical for every verb: ID returns the "id" property
// and Hooks the hook-valued properties that are set (nil when none).

// ID returns the verb's "id" property.
func (v *Alert) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Answer) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Conference) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Config) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Dequeue) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Dial) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Dtmf) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Dub) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Enqueue) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Gather) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Hangup) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Leave) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Listen) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Llm) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Message) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Pause) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Play) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Redirect) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Say) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *SipDecline) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *SipRefer) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *SipRequest) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Tag) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Transcribe) ID() string { return v.VerbID }

// Hooks returns the hook properties that are set.
func (v *Alert) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Answer) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Conference) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Config) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Dequeue) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Dial) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Dtmf) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Dub) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Enqueue) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Gather) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Hangup) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Leave) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Listen) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Llm) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Message) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Pause) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Play) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Redirect) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Say) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *SipDecline) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *SipRefer) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *SipRequest) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Tag) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the hook properties that are set.
func (v *Transcribe) Hooks() map[string]*Hook { return hooksOf(v) }

// ID returns the verb's "id" property.
func (v *Dialogflow) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Lex) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *Rasa) ID() string { return v.VerbID }

// ID returns the verb's "id" property.
func (v *RestDial) ID() string { return v.VerbID }

// Hooks returns the set hook properties.
func (v *Dialogflow) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the set hook properties.
func (v *Lex) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the set hook properties.
func (v *Rasa) Hooks() map[string]*Hook { return hooksOf(v) }

// Hooks returns the set hook properties.
func (v *RestDial) Hooks() map[string]*Hook { return hooksOf(v) }
