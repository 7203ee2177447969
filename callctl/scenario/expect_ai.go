package scenario

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboard-voice/switchboard/callctl"
)

// voiceAI checks the expectations of voice AI: tool calls and their outputs, what
// was spoken, the commands sent.
func (ev *evaluation) voiceAI(e Expectations) {
	r := ev.r
	if e.ToolCalls != nil {
		var names []string
		for _, tc := range r.ToolCalls {
			if tc.Name != "" {
				names = append(names, tc.Name)
			}
		}
		if n := matchedPrefix(e.ToolCalls, names); n < len(e.ToolCalls) {
			ev.fail("tool_calls", ev.end, "the model called [%s], want [%s] in this order", strings.Join(names, " "), strings.Join(e.ToolCalls, " "))
		}
	}
	for i, want := range e.ToolOutputs {
		ev.toolOutput(fmt.Sprintf("tool_outputs[%d]", i), want)
	}
	if e.Spoken != nil {
		k := 0
		var said []string
		for _, s := range r.Spoken {
			said = append(said, fmt.Sprintf("%q", s.Text))
			if k < len(e.Spoken) && strings.Contains(s.Text, e.Spoken[k]) {
				k++
			}
		}
		if k < len(e.Spoken) {
			ev.fail("spoken", ev.end, "%q was not said (in this order); the agent said [%s]", e.Spoken[k], strings.Join(said, ", "))
		}
	}
	for i, want := range e.Sent {
		ev.sent(fmt.Sprintf("sent[%d]", i), want)
	}
}

func (ev *evaluation) toolOutput(name string, want ToolOutput) {
	nth := max(want.Nth, 1)
	seen := 0
	var picked *callctl.ToolCall
	for i := range ev.r.ToolCalls {
		tc := &ev.r.ToolCalls[i]
		if (want.Tool == "" || tc.Name == want.Tool) && (want.ID == "" || tc.ID == want.ID) {
			if seen++; seen == nth {
				picked = tc
				break
			}
		}
	}
	what := strings.TrimSpace(want.Tool + " " + want.ID)
	if picked == nil {
		ev.fail(name, ev.end, "the model made %d %s tool call(s), want at least %d", seen, what, nth)
		return
	}
	which := fmt.Sprintf("the %s %s tool call", ordinal(nth), what)
	if !picked.Answered {
		ev.fail(name, picked.Event, "%s: the app returned no output", which)
		return
	}
	if picked.Dropped != "" && !want.Dropped {
		ev.fail(name, picked.Event, "%s: the app's output %s", which, picked.Dropped)
		return
	}
	if picked.Dropped == "" && want.Dropped {
		ev.fail(name, picked.Event, "%s: jambonz passes the app's output on, want it dropped", which)
		return
	}
	ev.matchPayload(name, picked.Event, which+": output", picked.Output, want.Output)
}

func (ev *evaluation) sent(name string, want Sent) {
	nth := max(want.Nth, 1)
	seen := 0
	var picked *callctl.Command
	for i := range ev.r.Commands {
		c := &ev.r.Commands[i]
		if c.Name == want.Command {
			if seen++; seen == nth {
				picked = c
				break
			}
		}
	}
	if picked == nil {
		ev.fail(name, ev.end, "the app sent %d %s command(s), want at least %d", seen, want.Command, nth)
		return
	}
	var data any
	_ = json.Unmarshal(picked.Data, &data)
	if picked.ToolCallID != "" {
		data = map[string]any{"tool_call_id": picked.ToolCallID, "data": data}
	}
	ev.matchPayload(name, picked.Event, fmt.Sprintf("the %s %s command", ordinal(nth), want.Command), data, want.Payload)
}

// matchPayload checks the paths of want in got (as received[].payload does).
func (ev *evaluation) matchPayload(name string, event int, which string, got any, want map[string]any) {
	value, err := jsonValue(got)
	if err != nil {
		ev.fail(name, event, "%s cannot be read: %v", which, err)
		return
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		p, err := ParsePath(key)
		if err != nil {
			ev.fail(name, event, "%s: %v", which, err)
			return
		}
		wantValue, err := jsonValue(want[key])
		if err != nil {
			ev.fail(name, event, "%s %s: %v", which, key, err)
			return
		}
		found, ok := p.Lookup(value)
		switch {
		case !ok && wantValue != nil:
			ev.fail(name, event, "%s %s is absent, want %s", which, key, canonical(wantValue))
			return
		case ok && canonical(found) != canonical(wantValue):
			ev.fail(name, event, "%s %s is %s, want %s", which, key, canonical(found), canonical(wantValue))
			return
		}
	}
}
