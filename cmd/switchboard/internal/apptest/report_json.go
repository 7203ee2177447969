package apptest

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/switchboard-voice/switchboard/callctl"
)

// jsonReporter prints JSON events, one per line, each as it happens (docs/testing.md
// §7).
type jsonReporter struct {
	mu      sync.Mutex
	w       io.Writer
	count   int
	rate    float64
	verbose bool
}

// The JSON events of `switchboard test --json`.
type (
	jsonRunEvent struct {
		Action   string `json:"action"` // "run"
		Scenario string `json:"scenario"`
		File     string `json:"file"`
		App      string `json:"app"`
		Run      int    `json:"run"`
	}
	jsonResultEvent struct {
		Action     string           `json:"action"` // "pass", "fail", "error" or "skip"
		Scenario   string           `json:"scenario"`
		File       string           `json:"file"`
		ElapsedMS  int64            `json:"elapsed_ms"`
		CallSid    string           `json:"call_sid"`
		Status     string           `json:"status"`
		Reason     string           `json:"reason"`
		Error      string           `json:"error,omitempty"`       // why an "error" could not reach its app
		SkipReason string           `json:"skip_reason,omitempty"` // why a "skip" was not run
		Failures   []jsonFailure    `json:"failures"`
		Timeline   []callctl.Event  `json:"timeline,omitempty"` // a failed run's whole timeline
		Runs       int              `json:"runs"`
		PassedRuns int              `json:"passed_runs"`
		PassRate   float64          `json:"pass_rate"`          // passed_runs / runs
		Required   float64          `json:"required_pass_rate"` // --pass-rate, 1 without it
		Failing    []jsonFailingRun `json:"failing_runs"`
		// Compat are the compat warnings of its runs that its expect.compat does
		// not name, each once.
		Compat []jsonCompat `json:"compat,omitempty"`
	}
	jsonCompat struct {
		Rule   string `json:"rule"`
		Detail string `json:"detail"`
	}
	jsonFailingRun struct {
		Run      int           `json:"run"`
		CallSid  string        `json:"call_sid"`
		Status   string        `json:"status"`
		Reason   string        `json:"reason"`
		Error    string        `json:"error,omitempty"`
		Failures []jsonFailure `json:"failures"`
	}
	jsonFailure struct {
		Expectation string `json:"expectation"`
		Message     string `json:"message"`
		Event       int    `json:"event"` // index into timeline, -1 when none
		TMS         int64  `json:"t_ms"`  // that line's t_ms
		Diff        string `json:"diff,omitempty"`
	}
	jsonSummaryEvent struct {
		Action    string `json:"action"` // "summary"
		Scenarios int    `json:"scenarios"`
		Passed    int    `json:"passed"`
		Failed    int    `json:"failed"`
		Errors    int    `json:"errors"`
		Skipped   int    `json:"skipped"` // skip: and not run
		ElapsedMS int64  `json:"elapsed_ms"`
	}
	jsonSnapshotEvent struct {
		Action string `json:"action"` // "snapshot"
		File   string `json:"file"`   // a snapshot file --update wrote
	}
	jsonChangeEvent struct {
		Action    string   `json:"action"` // "change"
		Files     []string `json:"files"`
		Scenarios int      `json:"scenarios"` // run again
	}
	jsonListEvent struct {
		Action     string `json:"action"` // "list"
		Scenario   string `json:"scenario"`
		File       string `json:"file"`
		App        string `json:"app"`
		SkipReason string `json:"skip_reason,omitempty"`
	}
)

// emit writes v as one line, "<" and "&" as they are: json.Marshal's HTML escaping
// would print an app's #rc=2&rp=ct as #rc=2\u0026rp=ct.
func (r *jsonReporter) emit(v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // the event types always marshal
		panic(err)
	}
	_, _ = r.w.Write(b.Bytes())
}

func (r *jsonReporter) started(tc *testCase, run int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(jsonRunEvent{Action: "run", Scenario: tc.name, File: tc.file, App: tc.app, Run: run})
}

func (r *jsonReporter) ended(o *outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(resultEvent(o, r.count, r.rate, r.verbose))
}

// resultEvent is a scenario's outcome as its JSON event: the call of its first
// failing run (its last run when all passed), and every failing run.
func resultEvent(o *outcome, count int, rate float64, verbose bool) jsonResultEvent {
	e := jsonResultEvent{Scenario: o.tc.name, File: o.tc.file, ElapsedMS: o.elapsed.Milliseconds(), Failures: []jsonFailure{},
		Failing: []jsonFailingRun{}, Runs: count, Required: 1}
	if rate > 0 {
		e.Required = rate
	}
	passed, failing := o.counts()
	e.PassedRuns, e.PassRate = passed, float64(passed)/float64(count)
	switch o.verdict {
	case verdictSkip, verdictNotRun:
		e.Action, e.SkipReason = "skip", o.why
		return e
	case verdictPass:
		e.Action = "pass"
	case verdictError:
		e.Action = "error"
	default:
		e.Action = "fail"
	}
	if o.verdict != verdictError {
		for _, w := range o.unnamedCompat() {
			e.Compat = append(e.Compat, jsonCompat{Rule: string(w.Rule), Detail: w.Detail})
		}
	}
	for _, f := range failing {
		e.Failing = append(e.Failing, jsonFailingRun{Run: f.run, CallSid: f.result.CallSid, Status: string(f.result.Status),
			Reason: f.result.Reason, Error: f.errMsg, Failures: jsonFailures(f)})
	}
	shown := o.lastRun()
	if o.verdict != verdictPass && len(failing) > 0 {
		shown = failing[0]
	}
	if shown == nil {
		return e
	}
	res := shown.result
	e.CallSid, e.Status, e.Reason = res.CallSid, string(res.Status), res.Reason
	if o.verdict != verdictPass {
		e.Error, e.Failures, e.Timeline = shown.errMsg, jsonFailures(shown), res.Timeline
	} else if verbose {
		e.Timeline = res.Timeline
	}
	return e
}

func jsonFailures(run *runResult) []jsonFailure {
	out := []jsonFailure{}
	tl := run.result.Timeline
	for _, f := range run.failures {
		j := jsonFailure{Expectation: f.Expectation, Message: f.Message, Event: f.Event}
		if f.Expectation == "snapshot" {
			j.Diff = run.diff
		}
		if f.Event >= 0 && f.Event < len(tl) {
			j.TMS = tl[f.Event].At.Milliseconds()
		}
		out = append(out, j)
	}
	return out
}

func (r *jsonReporter) summary(rep *report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	passed, failed, errored, skipped, notRun := rep.tally()
	r.emit(jsonSummaryEvent{Action: "summary", Scenarios: len(rep.outcomes), Passed: passed, Failed: failed, Errors: errored,
		Skipped: skipped + notRun, ElapsedMS: rep.elapsed.Milliseconds()})
}
