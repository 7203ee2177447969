package callctl

import (
	"encoding/json"
	"fmt"
	"time"
)

// The far end of a simulated call: what Script says the caller, the LLM, a dialed
// party, a queue partner and a conference do, beyond the answer to each gather
// (docs/call-control.md §9).

// Utterance is one thing the caller says or keys outside a gather: heard by what
// listens in the background, a config bargeIn (a background gather) or a transcribe.
type Utterance struct {
	// Speech said, or Digits keyed; exactly one.
	Speech, Digits string
	// After is how long the caller waits before speaking, counted from when it is
	// the caller's turn: for the first utterance, from the start of the first
	// background listener; for the next ones, from the agent's reply to the one
	// before (the hook answered, and when the application streams its reply with
	// tts:tokens, its tts:flush). Default 1 s.
	After time.Duration
	// Interrupt makes the caller talk over the agent: it speaks After the first
	// tts:tokens of the agent's reply instead of after the reply ended.
	Interrupt bool
}

// LLMScript is what the language model of one llm verb (s2s, the vendor shortcuts)
// does: its turns in order, then how the conversation ends.
type LLMScript struct {
	Turns []LLMTurn
	// End is the completion_reason the verb's actionHook reports once the turns are
	// over (default "normal conversation end"), with Error for "server error" and
	// the like. With Hold the conversation does not end by itself: it lasts until
	// the application changes course, the caller hangs up or the call's limits.
	End   string
	Error any
	Hold  bool
}

// LLMTurn is one step of a scripted conversation; exactly one of Agent, User,
// ToolCall or Event is set. After is the pause before it (default 1 s).
type LLMTurn struct {
	// Agent is what the model says; User what the caller says (as the model
	// transcribes it). Each becomes the vendor's own transcript event (llm:event).
	Agent, User string
	// ToolCall asks the application's toolHook to run a tool (llm:tool-call); the
	// model waits for its output (llm:tool-output) before going on.
	ToolCall *ToolCallScript
	// Event is a raw vendor event sent as it is (llm:event when the verb's events
	// list lets it through).
	Event map[string]any
	After time.Duration
}

// ToolCallScript is a tool call the model makes.
type ToolCallScript struct {
	Name string
	Args map[string]any
	// ID is the call's id (tool_call_id); default call_<n>, n counting the call's
	// tool calls from 1.
	ID string
}

// QueueOutcome is what happens to the caller of one enqueue.
type QueueOutcome struct {
	// DequeueAfter, when positive, is how long the caller waits in the queue before
	// a partner dequeues them (the caller is then bridged for Bridged, default 30
	// s). Zero: nobody dequeues the caller, who stays in the queue until the
	// application moves the call or the caller hangs up.
	DequeueAfter time.Duration
	Bridged      time.Duration
	// Position and Size of the queue while the caller waits. Default 1 and 1.
	Position, Size int
}

// DequeueOutcome is what one dequeue finds.
type DequeueOutcome struct {
	// Member is a caller waiting in the queue, found After the dequeue started
	// (default at once); nobody waiting means the dequeue times out. The bridge
	// with the member lasts Bridged (default 30 s).
	Member  bool
	After   time.Duration
	Bridged time.Duration
}

// ConferenceScript is what happens in one conference.
type ConferenceScript struct {
	// Running: the conference is already running when the caller arrives (the
	// caller joins it). Otherwise the caller starts it, unless the verb sets
	// startConferenceOnEnter false: the caller then waits for a moderator, who
	// arrives after ModeratorAfter (zero: never).
	Running        bool
	ModeratorAfter time.Duration
	// Members is the participant count once the caller joined (default 1, or 2
	// when Running).
	Members int
	// Events are the talking events of the caller's membership (start-talking,
	// stop-talking), each After the one before.
	Events []ConferenceEvent
	// Duration is how long the caller stays once joined. Default 30 s.
	Duration time.Duration
}

// ConferenceEvent is one conference event.
type ConferenceEvent struct {
	Event string
	After time.Duration
}

// DialExtras is what the dialed party does beyond answering (DialOutcome).
type DialExtras struct {
	// AMD is the answering machine detection verdict, with dial.amd: human,
	// machine, silence, fax (or tone), or error. Default human.
	AMD string
	// DTMF the parties key during the bridge, for the dial's dtmfHook.
	DTMF []DialDTMF
	// Confirm is what the dialed party answers on the confirm leg's gathers, in
	// order.
	Confirm []GatherInput
	// Callee is what the dialed party answers on the gathers of its own session,
	// once a child_call_hook made its leg one (adulting), in order.
	Callee []GatherInput
	// Refer, when set, is a REFER the dialed party sends during the bridge, for the
	// dial's referHook.
	Refer *DialRefer
}

// DialDTMF is a key sequence one leg of a dial sends.
type DialDTMF struct {
	// Digits keyed; Leg is "callee" (the dialed party, default) or "caller".
	Digits, Leg string
	After       time.Duration
}

// DialRefer is a REFER received during a dial.
type DialRefer struct {
	// To is the Refer-To URI (default sip:+15550100@example.com).
	To string
	// Leg that sends it: "callee" (default) or "caller".
	Leg   string
	After time.Duration
}

// BotScript is what a dialogflow, lex or rasa bot does: its replies, then the end.
type BotScript struct {
	// Intents are what the bot recognises, one per caller turn; each goes to the
	// verb's eventHook (intent, transcription events) before the next.
	Intents []BotIntent
}

// BotIntent is one exchange with a bot.
type BotIntent struct {
	// Say is what the caller says; Intent the intent the bot matched; Reply what the
	// bot answers.
	Say, Intent, Reply string
	After              time.Duration
}

// validateFarEnd adds the far end's problems to errs (Script.validate).
func (s Script) validateFarEnd(bad func(format string, args ...any)) {
	for i, u := range s.Speech {
		if (u.Speech == "") == (u.Digits == "") {
			bad("caller speech %d: give exactly one of speech or digits", i+1)
		}
		if u.After < 0 {
			bad("caller speech %d: negative delay", i+1)
		}
	}
	for i, l := range s.LLMs {
		for j, t := range l.Turns {
			n := 0
			for _, set := range []bool{t.Agent != "", t.User != "", t.ToolCall != nil, t.Event != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				bad("llm %d turn %d: give exactly one of agent, user, tool_call or event", i+1, j+1)
			}
			if t.ToolCall != nil && t.ToolCall.Name == "" {
				bad("llm %d turn %d: a tool call needs a name", i+1, j+1)
			}
			if t.Event != nil {
				if _, err := json.Marshal(t.Event); err != nil {
					bad("llm %d turn %d: event: %v", i+1, j+1, err)
				}
			}
			if t.After < 0 {
				bad("llm %d turn %d: negative delay", i+1, j+1)
			}
		}
	}
	for i, c := range s.Conferences {
		for j, e := range c.Events {
			if e.Event != "start-talking" && e.Event != "stop-talking" {
				bad("conference %d event %d: %q (want start-talking or stop-talking)", i+1, j+1, e.Event)
			}
		}
	}
	for i, d := range s.Dials {
		switch d.AMD {
		case "", "human", "machine", "silence", "fax", "tone", "error":
		default:
			bad("dial outcome %d: amd %q (want human, machine, silence, fax, tone or error)", i+1, d.AMD)
		}
		for j, k := range d.DTMF {
			if k.Leg != "" && k.Leg != "callee" && k.Leg != "caller" {
				bad("dial outcome %d dtmf %d: leg %q (want callee or caller)", i+1, j+1, k.Leg)
			}
		}
		if d.Refer != nil && d.Refer.Leg != "" && d.Refer.Leg != "callee" && d.Refer.Leg != "caller" {
			bad("dial outcome %d refer: leg %q (want callee or caller)", i+1, d.Refer.Leg)
		}
	}
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// defaultTurnDelay is the pause before an utterance, an LLM turn, a bot exchange.
const defaultTurnDelay = time.Second

func (u Utterance) String() string {
	if u.Digits != "" {
		return "keys " + u.Digits
	}
	return fmt.Sprintf("says %q", u.Speech)
}
