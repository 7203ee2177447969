package verbs

import "sort"

// Verb is one decoded, validated instruction.
type Verb interface {
	Name() string            // "say", "gather", "sip:decline", ... (canonical; "stream" decodes as "listen")
	ID() string              // the optional "id" property, "" if none
	Hooks() map[string]*Hook // hook properties present, keyed by property name ("actionHook", ...)
}

// registry maps every accepted verb name to a constructor of its zero value.
var registry = map[string]func() Verb{
	"alert":       func() Verb { return new(Alert) },
	"answer":      func() Verb { return new(Answer) },
	"conference":  func() Verb { return new(Conference) },
	"config":      func() Verb { return new(Config) },
	"dequeue":     func() Verb { return new(Dequeue) },
	"dialogflow":  func() Verb { return new(Dialogflow) },
	"dial":        func() Verb { return new(Dial) },
	"dtmf":        func() Verb { return new(Dtmf) },
	"dub":         func() Verb { return new(Dub) },
	"enqueue":     func() Verb { return new(Enqueue) },
	"gather":      func() Verb { return new(Gather) },
	"hangup":      func() Verb { return new(Hangup) },
	"leave":       func() Verb { return new(Leave) },
	"lex":         func() Verb { return new(Lex) },
	"listen":      func() Verb { return new(Listen) },
	"llm":         func() Verb { return new(Llm) },
	"message":     func() Verb { return new(Message) },
	"pause":       func() Verb { return new(Pause) },
	"play":        func() Verb { return new(Play) },
	"rasa":        func() Verb { return new(Rasa) },
	"redirect":    func() Verb { return new(Redirect) },
	"rest:dial":   func() Verb { return new(RestDial) },
	"say":         func() Verb { return new(Say) },
	"sip:decline": func() Verb { return new(SipDecline) },
	"sip:refer":   func() Verb { return new(SipRefer) },
	"sip:request": func() Verb { return new(SipRequest) },
	"tag":         func() Verb { return new(Tag) },
	"transcribe":  func() Verb { return new(Transcribe) },
}

// Names returns every verb name Decode accepts, aliases and shortcuts included,
// sorted.
func Names() []string {
	names := make([]string, 0, len(registry)+len(shortcuts))
	for n := range registry {
		names = append(names, n)
	}
	for n := range shortcuts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Known reports whether name is a verb Decode accepts (the aliases "stream", "s2s"
// and the s2s vendor shortcuts included: see Canonical).
func Known(name string) bool {
	_, ok := registry[Canonical(name)]
	return ok
}

// Name returns "alert".
func (v *Alert) Name() string { return "alert" }

// Name returns "answer".
func (v *Answer) Name() string { return "answer" }

// Name returns "conference".
func (v *Conference) Name() string { return "conference" }

// Name returns "config".
func (v *Config) Name() string { return "config" }

// Name returns "dequeue".
func (v *Dequeue) Name() string { return "dequeue" }

// Name returns "dial".
func (v *Dial) Name() string { return "dial" }

// Name returns "dtmf".
func (v *Dtmf) Name() string { return "dtmf" }

// Name returns "dub".
func (v *Dub) Name() string { return "dub" }

// Name returns "enqueue".
func (v *Enqueue) Name() string { return "enqueue" }

// Name returns "gather".
func (v *Gather) Name() string { return "gather" }

// Name returns "hangup".
func (v *Hangup) Name() string { return "hangup" }

// Name returns "leave".
func (v *Leave) Name() string { return "leave" }

// Name returns "listen" (also for verbs that arrived as "stream").
func (v *Listen) Name() string { return "listen" }

// Name returns "llm".
func (v *Llm) Name() string { return "llm" }

// Name returns "message".
func (v *Message) Name() string { return "message" }

// Name returns "pause".
func (v *Pause) Name() string { return "pause" }

// Name returns "play".
func (v *Play) Name() string { return "play" }

// Name returns "redirect".
func (v *Redirect) Name() string { return "redirect" }

// Name returns "say".
func (v *Say) Name() string { return "say" }

// Name returns "sip:decline".
func (v *SipDecline) Name() string { return "sip:decline" }

// Name returns "sip:refer".
func (v *SipRefer) Name() string { return "sip:refer" }

// Name returns "sip:request".
func (v *SipRequest) Name() string { return "sip:request" }

// Name returns "tag".
func (v *Tag) Name() string { return "tag" }

// Name returns "transcribe".
func (v *Transcribe) Name() string { return "transcribe" }
