package simulation

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/switchboard-voice/switchboard/callctl"
)

// timelineWriter prints events: as JSON lines, or readably. With one call the
// readable timeline is printed live; with many, only calls that did not end as
// expected are described (JSON lines are always printed in full).
type timelineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	live bool
}

// jsonLine writes v as one line of JSON, "<" and "&" as they are (json.Marshal would
// escape them: a say's SSML and a URL's retry fragment would read \u003c and \u0026).
// The caller holds t.mu.
func (t *timelineWriter) jsonLine(v any) error {
	enc := json.NewEncoder(t.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (t *timelineWriter) event(e callctl.Event) {
	if !t.json && !t.live {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		_ = t.jsonLine(e)
		return
	}
	fmt.Fprintln(t.w, e.String())
}

func (t *timelineWriter) finished(r *callctl.Result, failures []string, asExpected bool) {
	if t.json {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.live && !asExpected {
		fmt.Fprintf(t.w, "call %s: %s (%s, SIP %d)\n", r.CallSid, r.Status, r.Reason, r.SIPStatus)
	}
	for _, f := range failures {
		fmt.Fprintf(t.w, "  ✗ %s\n", f)
	}
}

// summary aggregates the calls of a simulation.
type summary struct {
	mu                 sync.Mutex
	start              time.Time
	wall               time.Duration // set by finish
	calls              int
	completed          int
	failed             int
	canceled           int
	alerts             int
	compat             int
	expectationsFailed int
	unexpected         int
	failures           []expectationFailure // the first maxListedFailures
	latencies          []time.Duration
}

// maxListedFailures bounds the expectation failures the summary lists: a load run
// whose every call fails the same way needs a few examples, not all of them.
const maxListedFailures = 20

// expectationFailure is one expectation that did not hold, in the summary.
type expectationFailure struct {
	CallSid string `json:"call_sid"`
	Failure string `json:"failure"`
}

func newSummary() *summary { return &summary{start: time.Now()} }

// finish ends the run's wall time.
func (s *summary) finish() {
	s.mu.Lock()
	s.wall = time.Since(s.start)
	s.mu.Unlock()
}

// rate is calls per second of wall time, rounded to 0.1.
func (s *summary) rate() float64 {
	if s.wall <= 0 {
		return 0
	}
	return math.Round(float64(s.calls)/s.wall.Seconds()*10) / 10
}

func (s *summary) add(r *callctl.Result, failures []string, asExpected bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	// completed, failed and canceled need not add up to calls: a call declined as
	// busy or no-answer is none of them. A canceled call (--timeout, Ctrl-C) did not
	// fail: it was stopped.
	switch {
	case r.Reason == callctl.ReasonCanceled:
		s.canceled++
	case r.Failed():
		s.failed++
	case r.Status == callctl.StatusCompleted:
		s.completed++
	}
	s.alerts += len(r.Alerts)
	s.compat += len(r.Compat)
	s.expectationsFailed += len(failures)
	for _, f := range failures {
		if len(s.failures) < maxListedFailures {
			s.failures = append(s.failures, expectationFailure{CallSid: r.CallSid, Failure: f})
		}
	}
	if !asExpected {
		s.unexpected++
	}
	s.latencies = append(s.latencies, r.HookLatencies...)
}

// summaryJSON is the last line of `simulate --json`.
type summaryJSON struct {
	Kind      string `json:"kind"`
	Calls     int    `json:"calls"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	Alerts    int    `json:"alerts"`
	// Compat counts the compat warnings (docs/compatibility.md §2).
	Compat             int            `json:"compat"`
	HookLatencyMS      latencySummary `json:"hook_latency_ms"`
	ExpectationsFailed int            `json:"expectations_failed"`
	// ExpectationFailures says which expectations did not hold (the first 20).
	ExpectationFailures []expectationFailure `json:"expectation_failures,omitempty"`
	// Canceled counts the calls stopped by --timeout or Ctrl-C; WallMS is the run's
	// real duration and CallsPerSecond its calls per second of it.
	Canceled       int     `json:"canceled"`
	WallMS         int64   `json:"wall_ms"`
	CallsPerSecond float64 `json:"calls_per_second"`
}

type latencySummary struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// percentile is the nearest-rank percentile of sorted, in milliseconds (0 when empty).
func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	rank = min(max(rank, 0), len(sorted)-1)
	return math.Round(float64(sorted[rank])/float64(time.Millisecond)*1000) / 1000
}

func (t *timelineWriter) summary(s *summary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := slices.Clone(s.latencies)
	slices.Sort(lat)
	j := summaryJSON{
		Kind: "summary", Calls: s.calls, Completed: s.completed, Failed: s.failed, Alerts: s.alerts, Compat: s.compat,
		HookLatencyMS:      latencySummary{P50: percentile(lat, 50), P95: percentile(lat, 95), P99: percentile(lat, 99)},
		ExpectationsFailed: s.expectationsFailed, ExpectationFailures: s.failures,
		Canceled: s.canceled, WallMS: s.wall.Milliseconds(), CallsPerSecond: s.rate(),
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		_ = t.jsonLine(j)
		return
	}
	fmt.Fprintf(t.w, "\n%d call(s): %d completed, %d failed, %d canceled, %d alert(s), %d compat warning(s), %d expectation(s) failed; hook latency p50 %.1fms p95 %.1fms p99 %.1fms; %.2fs wall, %.1f calls/s\n",
		j.Calls, j.Completed, j.Failed, j.Canceled, j.Alerts, j.Compat, j.ExpectationsFailed, j.HookLatencyMS.P50, j.HookLatencyMS.P95, j.HookLatencyMS.P99,
		s.wall.Seconds(), j.CallsPerSecond)
}

// progress is a progress bar on a terminal (Options.Progress), and nothing without
// one: calls done of all, and their rate.
type progress struct{ bar *progressbar.ProgressBar }

func newProgress(w io.Writer, calls int) *progress {
	if calls < 2 || w == nil {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(calls,
		progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("calls"),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("calls"),
		progressbar.OptionClearOnFinish())}
}

func (p *progress) add() {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
