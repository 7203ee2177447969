package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Expectations are assertions about a finished call: a scenario's expect section.
type Expectations struct {
	// Verbs, when set, must equal the names of the verbs executed, in order.
	Verbs []string `yaml:"verbs"`
	// VerbsInOrder must all have run, in this order (others may come between);
	// VerbsInclude must each have run at least once, in any order.
	VerbsInOrder []string `yaml:"verbs_in_order"`
	VerbsInclude []string `yaml:"verbs_include"`
	// ToolCalls are tool calls the model must have made, by name, in this order.
	ToolCalls []string `yaml:"tool_calls"`
	// ToolOutputs are outputs the application must have returned for tool calls.
	ToolOutputs []ToolOutput `yaml:"tool_outputs"`
	// Spoken are texts the agent must have said (say, streamed tokens, an LLM's
	// turns), in this order: each is found within one thing said.
	Spoken []string `yaml:"spoken"`
	// Sent are commands the application must have sent.
	Sent []Sent `yaml:"sent"`
	// Hooks must all have been requested, in this order (other hooks may come
	// between them). HTTP hooks are named by URL path, WebSocket hooks by name.
	Hooks []string `yaml:"hooks"`
	// HooksExact, when set, must equal the hooks requested, named as in Hooks: the
	// order and the count of every one.
	HooksExact []string `yaml:"hooks_exact"`
	// HookCounts says how many times a hook must have been requested (0: never).
	HookCounts map[string]int `yaml:"hook_counts"`
	// Status, when set, is the call's expected final status.
	Status callctl.Status `yaml:"status"`
	// Reason, when set, is why the call is expected to end (Result.Reason).
	Reason string `yaml:"reason"`
	// Alerts, when set, must each have been raised at least once.
	Alerts []callctl.AlertType `yaml:"alerts"`
	// NoAlerts must not have been raised at all.
	NoAlerts []callctl.AlertType `yaml:"no_alerts"`
	// Received are requests the application must have received.
	Received []Received `yaml:"received"`
	// MaxAnswerTime, when set, bounds every answer of the application: each HTTP
	// hook's answered attempt, each ack.
	MaxAnswerTime Duration `yaml:"max_answer_time"`
	// Compat are compat warnings (callctl.CompatRule) that must each have been
	// recorded at least once: a scenario that relies on a jambonz behaviour names
	// it, and `--strict` then accepts it (Strict).
	Compat []callctl.CompatRule `yaml:"compat"`
}

// Received is one request the application must have received: the Nth (from 1,
// default the first) of those matching Hook and Type, with the given method, fields
// and answer time.
type Received struct {
	// Hook selects requests by hook, named as in Expectations.Hooks (an HTTP hook's
	// path, a WebSocket hook, the application's path for session:new).
	Hook string `yaml:"hook"`
	// Type selects WebSocket messages by type (session:new, verb:hook, call:status
	// ...).
	Type string `yaml:"type"`
	// Nth picks one of the requests selected, from 1. Default 1.
	Nth int `yaml:"nth"`
	// Method, when set, is the HTTP method the hook must have used.
	Method string `yaml:"method"`
	// Payload maps a path into the request's payload (ParsePath) to the value it
	// must hold; null means absent (or null).
	Payload map[string]any `yaml:"payload"`
	// AnsweredWithin, when set, bounds the application's answer to the request.
	AnsweredWithin Duration `yaml:"answered_within"`
}

// ToolOutput is an output the application must have returned for a tool call: the
// Nth call (from 1, default the first) of Tool, or the call of ID.
type ToolOutput struct {
	Tool string `yaml:"tool"`
	ID   string `yaml:"id"`
	Nth  int    `yaml:"nth"`
	// Output maps a path into the output (as Received.Payload) to the value it must
	// hold.
	Output map[string]any `yaml:"output"`
	// Dropped, when true, expects an output jambonz would not pass on to the model
	// (a shape its vendor does not take); by default such an output fails.
	Dropped bool `yaml:"dropped"`
}

// Sent is a command the application must have sent: the Nth (from 1) of Command,
// with the given payload.
type Sent struct {
	Command string         `yaml:"command"`
	Nth     int            `yaml:"nth"`
	Payload map[string]any `yaml:"payload"`
}

// Failure is one expectation that did not hold.
type Failure struct {
	// Expectation names it as the scenario file does: verbs, hooks, received[0] ...;
	// "call" for a call that failed although nothing expected it to.
	Expectation string
	// Message says what was expected and what happened; it starts with Expectation.
	Message string
	// Event is the index in the call's Timeline of the line the failure concerns
	// (the first verb that differs, the request, the alert, the call's end); -1 when
	// the timeline is empty.
	Event int
}

// Set reports whether any expectation is given.
func (e Expectations) Set() bool {
	return e.Verbs != nil || e.Hooks != nil || e.HooksExact != nil || e.HookCounts != nil || e.Status != "" ||
		e.Reason != "" || e.Alerts != nil || e.NoAlerts != nil || e.Received != nil || e.MaxAnswerTime > 0 ||
		e.VerbsInOrder != nil || e.VerbsInclude != nil || e.ToolCalls != nil || e.ToolOutputs != nil ||
		e.Spoken != nil || e.Sent != nil || e.Compat != nil
}

// ExpectFailure reports whether the expectations anticipate a call that fails
// (Result.Failed): they name its reason, or a final status other than completed. A
// completed call that lost its WebSocket, say, failed all the same.
func (e Expectations) ExpectFailure() bool {
	return e.Reason != "" || e.Status != "" && e.Status != callctl.StatusCompleted
}

// Check returns one message per expectation that does not hold for r.
func (e Expectations) Check(r *callctl.Result) []string {
	var out []string
	for _, f := range e.Evaluate(r) {
		out = append(out, f.Message)
	}
	return out
}

// Evaluate returns the expectations that do not hold for r, in the order of the
// fields of Expectations, each located on r's timeline.
func (e Expectations) Evaluate(r *callctl.Result) []Failure {
	ev := evaluation{r: r, end: len(r.Timeline) - 1}
	if e.Verbs != nil && !slices.Equal(e.Verbs, r.Verbs) {
		ev.fail("verbs", ev.verbEvent(firstDifference(e.Verbs, r.Verbs)), "got [%s], want [%s]", strings.Join(r.Verbs, " "), strings.Join(e.Verbs, " "))
	}
	if e.VerbsInOrder != nil {
		if n := matchedPrefix(e.VerbsInOrder, r.Verbs); n < len(e.VerbsInOrder) {
			ev.fail("verbs_in_order", ev.end, "got [%s], want [%s] in this order (missing from %s on)", strings.Join(r.Verbs, " "),
				strings.Join(e.VerbsInOrder, " "), e.VerbsInOrder[n])
		}
	}
	for _, v := range e.VerbsInclude {
		if !slices.Contains(r.Verbs, v) {
			ev.fail("verbs_include", ev.end, "%s never ran; got [%s]", v, strings.Join(r.Verbs, " "))
		}
	}
	ev.voiceAI(e)
	if e.Hooks != nil {
		if n := matchedPrefix(e.Hooks, r.Hooks); n < len(e.Hooks) {
			ev.fail("hooks", ev.end, "got [%s], want [%s] in this order", strings.Join(r.Hooks, " "), strings.Join(e.Hooks, " "))
		}
	}
	if e.HooksExact != nil && !slices.Equal(e.HooksExact, r.Hooks) {
		ev.fail("hooks_exact", ev.hookEvent(firstDifference(e.HooksExact, r.Hooks)), "got [%s], want exactly [%s]", strings.Join(r.Hooks, " "), strings.Join(e.HooksExact, " "))
	}
	for _, h := range slices.Sorted(maps.Keys(e.HookCounts)) {
		want := e.HookCounts[h]
		if got := countOf(r.Hooks, h); got != want {
			at := ev.end
			if got > want {
				at = ev.hookEvent(nthIndex(r.Hooks, h, want+1))
			}
			ev.fail("hook_counts", at, "%s requested %d time(s), want %d", h, got, want)
		}
	}
	if e.Status != "" && e.Status != r.Status {
		ev.fail("status", ev.end, "got %s (%s), want %s", r.Status, r.Reason, e.Status)
	}
	if e.Reason != "" && e.Reason != r.Reason {
		ev.fail("reason", ev.end, "got %s, want %s", r.Reason, e.Reason)
	}
	for _, a := range e.Alerts {
		if !slices.ContainsFunc(r.Alerts, func(x callctl.Alert) bool { return x.Type == a }) {
			ev.fail("alerts", ev.end, "%s was not raised", a)
		}
	}
	for _, a := range e.NoAlerts {
		i := slices.IndexFunc(r.Timeline, func(x callctl.Event) bool { return x.Kind == callctl.KindAlert && x.AlertType == a })
		if i >= 0 {
			ev.fail("no_alerts", i, "%s was raised: %s", a, r.Timeline[i].Detail)
		}
	}
	for i, want := range e.Received {
		ev.received(fmt.Sprintf("received[%d]", i), want)
	}
	for _, rule := range e.Compat {
		if !slices.ContainsFunc(r.Compat, func(w callctl.Compat) bool { return w.Rule == rule }) {
			ev.fail("compat", ev.end, "no %s warning was recorded", rule)
		}
	}
	if limit := time.Duration(e.MaxAnswerTime); limit > 0 {
		for _, q := range r.Requests {
			if q.Answered && q.AnswerTime > limit {
				ev.fail("max_answer_time", q.Event, "%s answered in %v, want within %v", describe(q), q.AnswerTime.Round(time.Millisecond), limit)
				break
			}
		}
	}
	return ev.failures
}

// Strict returns a failure for each compat warning of r that the expectations do not
// name in expect.compat: what `switchboard test --strict` and `simulate --strict`
// fail on (docs/compatibility.md §2). Each is located at its compat line.
func (e Expectations) Strict(r *callctl.Result) []Failure {
	ev := evaluation{r: r, end: len(r.Timeline) - 1}
	for i, x := range r.Timeline {
		if x.Kind == callctl.KindCompat && !slices.Contains(e.Compat, x.Rule) {
			ev.fail("strict", i, "compat warning %s: %s", x.Rule, x.Detail)
		}
	}
	return ev.failures
}

// evaluation collects the failures of one Evaluate.
type evaluation struct {
	r        *callctl.Result
	end      int // the call.end line
	failures []Failure
}

func (ev *evaluation) fail(name string, event int, format string, args ...any) {
	ev.failures = append(ev.failures, Failure{Expectation: name, Message: name + ": " + fmt.Sprintf(format, args...), Event: event})
}

// verbEvent is the line of the k-th verb.start, or the call's end.
func (ev *evaluation) verbEvent(k int) int {
	n := 0
	for i, e := range ev.r.Timeline {
		if e.Kind == callctl.KindVerbStart {
			if n == k {
				return i
			}
			n++
		}
	}
	return ev.end
}

// hookEvent is the first line of the request listed k-th in Result.Hooks, or the
// call's end.
func (ev *evaluation) hookEvent(k int) int {
	for _, q := range ev.r.Requests {
		if q.HookIndex == k && k >= 0 {
			return q.Event
		}
	}
	return ev.end
}

// received checks one expect.received entry.
func (ev *evaluation) received(name string, want Received) {
	nth := max(want.Nth, 1)
	var picked *callctl.Request
	seen := 0
	for i := range ev.r.Requests {
		q := &ev.r.Requests[i]
		if (want.Hook == "" || q.Hook == want.Hook) && (want.Type == "" || q.Type == want.Type) {
			if seen++; seen == nth {
				picked = q
				break
			}
		}
	}
	what := strings.TrimSpace(want.Type + " " + want.Hook)
	if picked == nil {
		ev.fail(name, ev.end, "the app received %d %s request(s), want at least %d", seen, what, nth)
		return
	}
	which := fmt.Sprintf("the %s %s", ordinal(nth), what)
	if want.Method != "" && picked.Method != want.Method {
		ev.fail(name, picked.Event, "%s: method %s, want %s", which, orNone(picked.Method), want.Method)
		return
	}
	payload, err := jsonValue(picked.Payload)
	if err != nil {
		ev.fail(name, picked.Event, "%s: payload cannot be read: %v", which, err)
		return
	}
	for _, key := range slices.Sorted(maps.Keys(want.Payload)) {
		p, err := ParsePath(key)
		if err != nil { // Parse refused it already
			ev.fail(name, picked.Event, "%s: %v", which, err)
			return
		}
		wantValue, err := jsonValue(want.Payload[key])
		if err != nil {
			ev.fail(name, picked.Event, "%s: payload %s: %v", which, key, err)
			return
		}
		got, found := p.Lookup(payload)
		switch {
		case !found && wantValue != nil:
			ev.fail(name, picked.Event, "%s: payload %s is absent, want %s", which, key, canonical(wantValue))
			return
		case found && canonical(got) != canonical(wantValue):
			ev.fail(name, picked.Event, "%s: payload %s is %s, want %s", which, key, canonical(got), canonical(wantValue))
			return
		}
	}
	if limit := time.Duration(want.AnsweredWithin); limit > 0 {
		switch {
		case !picked.Answered:
			ev.fail(name, picked.Event, "%s: not answered, want an answer within %v", which, limit)
		case picked.AnswerTime > limit:
			ev.fail(name, picked.Event, "%s: answered in %v, want within %v", which, picked.AnswerTime.Round(time.Millisecond), limit)
		}
	}
}

// describe names a request for a message: "verb:hook /gather", "POST /call".
func describe(q callctl.Request) string {
	if q.Type != "" {
		return strings.TrimSpace(q.Type + " " + q.Hook)
	}
	return q.Method + " " + q.Hook
}

func orNone(s string) string {
	if s == "" {
		return "none (a WebSocket message)"
	}
	return s
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// firstDifference is the first position where a and b differ (their common length
// when one is a prefix of the other).
func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// matchedPrefix is how many of want appear in got, in order.
func matchedPrefix(want, got []string) int {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// nthIndex is the index of the n-th (from 1) s in list, -1 when there is none.
func nthIndex(list []string, s string, n int) int {
	for i, x := range list {
		if x == s {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}
