package scenario

import (
	"encoding/json"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Scenario is one scenario file: what the caller and the network do during each
// simulated call, and what is expected of the call. Unknown keys are errors.
type Scenario struct {
	// App is the application the scenario runs against (`switchboard test`): an
	// http(s) or ws(s) URL, with its retry fragment.
	App string `yaml:"app"`
	// StatusHook receives an HTTP application's status notifications: absolute, or
	// a path relative to App.
	StatusHook string `yaml:"status_hook"`

	From string `yaml:"from"`
	To   string `yaml:"to"`
	// SIP is the simulated INVITE of an inbound call (its headers reach the call
	// hook's sip.headers).
	SIP SIP `yaml:"sip"`
	// Answer is how the far end of an outbound call (one a node's REST API creates)
	// answers.
	Answer Answer `yaml:"answer"`
	// EnvVars are the application's environment variables, sent as env_vars with
	// the call hook (jambonz passes an application's env_vars with session:new and
	// the call hook): where an app reads its API keys.
	EnvVars map[string]any `yaml:"env_vars"`
	// QueueEventHook is the account's queue event webhook (jambonz's account
	// queue_event_hook): an absolute http(s) URL that gets queue:status as the call
	// joins and leaves queues (callctl.Options.QueueEventHookURL).
	QueueEventHook string          `yaml:"queue_event_hook"`
	Caller         Caller          `yaml:"caller"`
	Faults         []callctl.Fault `yaml:"faults"`
	// Network is what goes wrong on the network between the node and the app
	// (callctl.NetworkFaults).
	Network Network      `yaml:"network"`
	Expect  Expectations `yaml:"expect"`
}

// Network is the network section: latency and jitter on every message, a slow app,
// the first connection attempts refused or reset.
type Network struct {
	Latency Duration `yaml:"latency"`
	Jitter  Duration `yaml:"jitter"`
	SlowApp Duration `yaml:"slow_app"`
	Refuse  int      `yaml:"refuse"`
	Reset   int      `yaml:"reset"`
}

// SIP is the simulated INVITE: headers added to the SBC's (X-Originating-Carrier
// and X-Forwarded-For also name the call's origin).
type SIP struct {
	Headers map[string]string `yaml:"headers"`
}

// Answer is how the called party of an outbound call answers (callctl.AnswerOutcome):
// after ringing for After (with early media: 183), with Status (completed, busy,
// no-answer, failed) and SIPStatus.
type Answer struct {
	After      Duration `yaml:"after"`
	EarlyMedia bool     `yaml:"early_media"`
	Status     string   `yaml:"status"`
	SIPStatus  int      `yaml:"sip_status"`
}

// Caller is what the far end does: the caller, the LLM, dialed parties, queue
// partners, conferences and bots (callctl.Script).
type Caller struct {
	Gathers     []Gather     `yaml:"gathers"`
	Dials       []Dial       `yaml:"dials"`
	HangupAfter Duration     `yaml:"hangup_after"`
	Speech      []Utterance  `yaml:"speech"`
	LLM         []LLM        `yaml:"llm"`
	Queues      []Queue      `yaml:"queues"`
	Dequeues    []Dequeue    `yaml:"dequeues"`
	Conferences []Conference `yaml:"conferences"`
	Bots        []Bot        `yaml:"bots"`
}

// Utterance is what the caller says or keys outside a gather (callctl.Utterance).
type Utterance struct {
	Speech    string   `yaml:"speech"`
	Digits    Digits   `yaml:"digits"`
	After     Duration `yaml:"after"`
	Interrupt bool     `yaml:"interrupt"`
}

// LLM is the scripted model of one llm verb (callctl.LLMScript).
type LLM struct {
	Turns []LLMTurn `yaml:"turns"`
	End   string    `yaml:"end"`
	Error any       `yaml:"error"`
	Hold  bool      `yaml:"hold"`
}

// LLMTurn is one turn: agent, user, tool_call or event.
type LLMTurn struct {
	Agent    string         `yaml:"agent"`
	User     string         `yaml:"user"`
	ToolCall *ToolCall      `yaml:"tool_call"`
	Event    map[string]any `yaml:"event"`
	After    Duration       `yaml:"after"`
}

// ToolCall is a tool call of the model.
type ToolCall struct {
	Name string         `yaml:"name"`
	Args map[string]any `yaml:"args"`
	ID   string         `yaml:"id"`
}

// Queue is the outcome of one enqueue (callctl.QueueOutcome).
type Queue struct {
	DequeueAfter Duration `yaml:"dequeue_after"`
	Bridged      Duration `yaml:"bridged"`
	Position     int      `yaml:"position"`
	Size         int      `yaml:"size"`
}

// Dequeue is what one dequeue finds (callctl.DequeueOutcome).
type Dequeue struct {
	Member  bool     `yaml:"member"`
	After   Duration `yaml:"after"`
	Bridged Duration `yaml:"bridged"`
}

// Conference is what happens in one conference (callctl.ConferenceScript).
type Conference struct {
	Running        bool              `yaml:"running"`
	ModeratorAfter Duration          `yaml:"moderator_after"`
	Members        int               `yaml:"members"`
	Events         []ConferenceEvent `yaml:"events"`
	Duration       Duration          `yaml:"duration"`
}

// ConferenceEvent is a talking event of the caller's membership.
type ConferenceEvent struct {
	Event string   `yaml:"event"`
	After Duration `yaml:"after"`
}

// Bot is what a dialogflow, lex or rasa bot does (callctl.BotScript).
type Bot struct {
	Intents []BotIntent `yaml:"intents"`
}

// BotIntent is one exchange with a bot.
type BotIntent struct {
	Say    string   `yaml:"say"`
	Intent string   `yaml:"intent"`
	Reply  string   `yaml:"reply"`
	After  Duration `yaml:"after"`
}

// Gather is the caller's answer to one gather: digits, speech, or (timeout: true,
// or nothing) no answer.
type Gather struct {
	// Digits are keyed one at a time, KeyInterval apart (default 250 ms), the
	// first After the prompt ended; the gather's rules decide which it takes.
	Digits      Digits   `yaml:"digits"`
	Speech      string   `yaml:"speech"`
	After       Duration `yaml:"after"`
	KeyInterval Duration `yaml:"key_interval"`
	Timeout     bool     `yaml:"timeout"`
}

// Dial is the outcome of one dial, and what the dialed party does.
type Dial struct {
	Status    string   `yaml:"status"`
	SIPStatus int      `yaml:"sip_status"`
	Duration  Duration `yaml:"duration"`
	// AMD is the answering machine detection verdict: human, machine, silence,
	// fax, tone or error.
	AMD string `yaml:"amd"`
	// DTMF the parties key during the bridge; Confirm what the dialed party answers
	// on the confirm leg's gathers; Callee what it answers on the gathers of its own
	// session once a child_call_hook made it one; Refer a REFER it sends.
	DTMF    []DialDTMF `yaml:"dtmf"`
	Confirm []Gather   `yaml:"confirm"`
	Callee  []Gather   `yaml:"callee"`
	Refer   *DialRefer `yaml:"refer"`
}

// DialDTMF is a key sequence one leg sends during a dial.
type DialDTMF struct {
	Digits Digits   `yaml:"digits"`
	Leg    string   `yaml:"leg"`
	After  Duration `yaml:"after"`
}

// DialRefer is a REFER received during a dial.
type DialRefer struct {
	To    string   `yaml:"to"`
	Leg   string   `yaml:"leg"`
	After Duration `yaml:"after"`
}

// Script converts the caller and fault parts into the callctl.Script of a call.
func (s *Scenario) Script() callctl.Script {
	var sc callctl.Script
	for _, g := range s.Caller.Gathers {
		sc.Gathers = append(sc.Gathers, callctl.GatherInput{Digits: string(g.Digits), Speech: g.Speech, After: time.Duration(g.After),
			KeyInterval: time.Duration(g.KeyInterval)})
	}
	for _, d := range s.Caller.Dials {
		out := callctl.DialOutcome{Status: callctl.Status(d.Status), SIPStatus: d.SIPStatus, Duration: time.Duration(d.Duration)}
		out.AMD = d.AMD
		for _, k := range d.DTMF {
			out.DTMF = append(out.DTMF, callctl.DialDTMF{Digits: string(k.Digits), Leg: k.Leg, After: time.Duration(k.After)})
		}
		for _, g := range d.Confirm {
			out.Confirm = append(out.Confirm, callctl.GatherInput{Digits: string(g.Digits), Speech: g.Speech, After: time.Duration(g.After)})
		}
		for _, g := range d.Callee {
			out.Callee = append(out.Callee, callctl.GatherInput{Digits: string(g.Digits), Speech: g.Speech, After: time.Duration(g.After)})
		}
		if r := d.Refer; r != nil {
			out.Refer = &callctl.DialRefer{To: r.To, Leg: r.Leg, After: time.Duration(r.After)}
		}
		sc.Dials = append(sc.Dials, out)
	}
	for _, u := range s.Caller.Speech {
		sc.Speech = append(sc.Speech, callctl.Utterance{Speech: u.Speech, Digits: string(u.Digits), After: time.Duration(u.After), Interrupt: u.Interrupt})
	}
	for _, l := range s.Caller.LLM {
		ls := callctl.LLMScript{End: l.End, Error: l.Error, Hold: l.Hold}
		for _, t := range l.Turns {
			turn := callctl.LLMTurn{Agent: t.Agent, User: t.User, Event: jsonMap(t.Event), After: time.Duration(t.After)}
			if tc := t.ToolCall; tc != nil {
				turn.ToolCall = &callctl.ToolCallScript{Name: tc.Name, Args: jsonMap(tc.Args), ID: tc.ID}
			}
			ls.Turns = append(ls.Turns, turn)
		}
		sc.LLMs = append(sc.LLMs, ls)
	}
	for _, q := range s.Caller.Queues {
		sc.Queues = append(sc.Queues, callctl.QueueOutcome{DequeueAfter: time.Duration(q.DequeueAfter), Bridged: time.Duration(q.Bridged),
			Position: q.Position, Size: q.Size})
	}
	for _, d := range s.Caller.Dequeues {
		sc.Dequeues = append(sc.Dequeues, callctl.DequeueOutcome{Member: d.Member, After: time.Duration(d.After), Bridged: time.Duration(d.Bridged)})
	}
	for _, c := range s.Caller.Conferences {
		cs := callctl.ConferenceScript{Running: c.Running, ModeratorAfter: time.Duration(c.ModeratorAfter), Members: c.Members,
			Duration: time.Duration(c.Duration)}
		for _, e := range c.Events {
			cs.Events = append(cs.Events, callctl.ConferenceEvent{Event: e.Event, After: time.Duration(e.After)})
		}
		sc.Conferences = append(sc.Conferences, cs)
	}
	for _, b := range s.Caller.Bots {
		var bs callctl.BotScript
		for _, i := range b.Intents {
			bs.Intents = append(bs.Intents, callctl.BotIntent{Say: i.Say, Intent: i.Intent, Reply: i.Reply, After: time.Duration(i.After)})
		}
		sc.Bots = append(sc.Bots, bs)
	}
	sc.HangupAfter = time.Duration(s.Caller.HangupAfter)
	sc.SIPHeaders = s.SIP.Headers
	sc.Answer = callctl.AnswerOutcome{After: time.Duration(s.Answer.After), EarlyMedia: s.Answer.EarlyMedia,
		Status: callctl.Status(s.Answer.Status), SIPStatus: s.Answer.SIPStatus}
	sc.Faults = append(sc.Faults, s.Faults...)
	n := s.Network
	sc.Network = callctl.NetworkFaults{Latency: time.Duration(n.Latency), Jitter: time.Duration(n.Jitter),
		SlowApp: time.Duration(n.SlowApp), Refuse: n.Refuse, Reset: n.Reset}
	return sc
}

// jsonMap is m as JSON decodes it (YAML's integers become float64), so that what
// the scenario scripts goes out as the application would see it.
func jsonMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return m
	}
	return out
}

// Expectations returns the expect part.
func (s *Scenario) Expectations() Expectations { return s.Expect }
