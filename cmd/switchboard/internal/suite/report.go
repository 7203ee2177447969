package suite

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// Reporter prints a run of scenarios: as text, one line per scenario in the
// order of the files whatever the order they end in, or as JSON events, each printed
// as it happens (docs/cli.md: `switchboard test --json`).
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	width int // of the name column

	done []*Outcome // by index, until printed
	next int        // the next index to print
}

// NewReporter reports the scenarios run to w, as JSON events when asJSON.
func NewReporter(w io.Writer, asJSON bool, run []*Scenario) *Reporter {
	r := &Reporter{w: w, json: asJSON, done: make([]*Outcome, len(run))}
	for _, ts := range run {
		r.width = max(r.width, len(ts.Name))
	}
	return r
}

// The JSON events of `switchboard test --json`, one per line.
type (
	testRunEvent struct {
		Action   string `json:"action"` // "run"
		Scenario string `json:"scenario"`
		File     string `json:"file"`
		App      string `json:"app"`
	}
	testResultEvent struct {
		Action    string            `json:"action"` // "pass", "fail" or "skip"
		Scenario  string            `json:"scenario"`
		File      string            `json:"file"`
		ElapsedMS int64             `json:"elapsed_ms"`
		CallSid   string            `json:"call_sid"`
		Status    string            `json:"status"`
		Reason    string            `json:"reason"`
		Failures  []testFailureJSON `json:"failures"`
		Timeline  []callctl.Event   `json:"timeline,omitempty"` // a failed scenario's whole timeline
	}
	testFailureJSON struct {
		Expectation string `json:"expectation"`
		Message     string `json:"message"`
		Event       int    `json:"event"` // index into timeline, -1 when none
		TMS         int64  `json:"t_ms"`  // that line's t_ms
	}
	testSummaryEvent struct {
		Action    string `json:"action"` // "summary"
		Scenarios int    `json:"scenarios"`
		Passed    int    `json:"passed"`
		Failed    int    `json:"failed"`
		Skipped   int    `json:"skipped"`
		ElapsedMS int64  `json:"elapsed_ms"`
	}
)

func (r *Reporter) emit(v any) {
	b, _ := json.Marshal(v) // the event types always marshal
	fmt.Fprintf(r.w, "%s\n", b)
}

// started reports that a scenario's call starts (JSON only).
func (r *Reporter) started(out *Outcome) {
	if !r.json {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emit(testRunEvent{Action: "run", Scenario: out.ts.Name, File: out.ts.File, App: out.ts.App})
}

// ended reports scenario i's outcome: at once in JSON; in text once every scenario
// before it has been printed.
func (r *Reporter) ended(i int, out *Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		r.emit(resultEvent(out))
		return
	}
	r.done[i] = out
	for r.next < len(r.done) && r.done[r.next] != nil {
		r.printText(r.done[r.next])
		r.done[r.next] = nil
		r.next++
	}
}

func resultEvent(out *Outcome) testResultEvent {
	e := testResultEvent{Action: "skip", Scenario: out.ts.Name, File: out.ts.File, Failures: []testFailureJSON{}}
	if !out.ran {
		return e
	}
	r := out.result
	e.Action, e.ElapsedMS, e.CallSid, e.Status, e.Reason = "pass", out.elapsed.Milliseconds(), r.CallSid, string(r.Status), r.Reason
	if out.passed {
		return e
	}
	e.Action, e.Timeline = "fail", r.Timeline
	for _, f := range out.failures {
		j := testFailureJSON{Expectation: f.Expectation, Message: f.Message, Event: f.Event}
		if f.Event >= 0 && f.Event < len(r.Timeline) {
			j.TMS = r.Timeline[f.Event].At.Milliseconds()
		}
		e.Failures = append(e.Failures, j)
	}
	return e
}

// printText prints a scenario's line, and for a failure its first unmet expectation
// and the timeline lines around the one it concerns.
func (r *Reporter) printText(out *Outcome) {
	if !out.ran {
		fmt.Fprintf(r.w, "SKIP  %-*s  (not run: interrupted)\n", r.width, out.ts.Name)
		return
	}
	if out.passed {
		fmt.Fprintf(r.w, "ok    %-*s  %.2fs\n", r.width, out.ts.Name, out.elapsed.Seconds())
		return
	}
	fmt.Fprintf(r.w, "FAIL  %-*s  %.2fs\n", r.width, out.ts.Name, out.elapsed.Seconds())
	fmt.Fprint(r.w, indent(failureText(out), "      "))
}

// failureText is the first failure of a scenario, the others named, and the
// timeline around the first (its line marked with >).
func failureText(out *Outcome) string {
	var b strings.Builder
	first := out.failures[0]
	fmt.Fprintf(&b, "%s\n", first.Message)
	if n := len(out.failures) - 1; n > 0 {
		var names []string
		for _, f := range out.failures[1:] {
			names = append(names, f.Expectation)
		}
		fmt.Fprintf(&b, "(and %d more: %s)\n", n, strings.Join(names, ", "))
	}
	tl := out.result.Timeline
	if len(tl) == 0 {
		return b.String()
	}
	at := first.Event
	if at < 0 || at >= len(tl) {
		at = len(tl) - 1
	}
	const around = 3
	for i := max(at-around, 0); i <= min(at+around, len(tl)-1); i++ {
		mark := "  "
		if i == at {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s%s\n", mark, tl[i].String())
	}
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// Summary prints the run's last line (text), or its summary event.
func (r *Reporter) Summary(s *Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.json {
		for _, out := range s.Outcomes {
			if !out.ran {
				r.emit(resultEvent(out))
			}
		}
		r.emit(testSummaryEvent{Action: "summary", Scenarios: len(s.Outcomes), Passed: s.Passed, Failed: s.Failed,
			Skipped: s.Skipped, ElapsedMS: s.Elapsed.Milliseconds()})
		return
	}
	for ; r.next < len(s.Outcomes); r.next++ { // skipped scenarios never ended
		r.printText(s.Outcomes[r.next])
	}
	skipped := ""
	if s.Skipped > 0 {
		skipped = fmt.Sprintf(", %d not run", s.Skipped)
	}
	if s.Failed == 0 && s.Skipped == 0 {
		fmt.Fprintf(r.w, "\nPASS: %d scenario(s) in %.2fs\n", s.Passed, s.Elapsed.Seconds())
		return
	}
	fmt.Fprintf(r.w, "\nFAIL: %d of %d scenario(s) failed, %d passed%s, in %.2fs\n", s.Failed, len(s.Outcomes), s.Passed, skipped, s.Elapsed.Seconds())
}

// The JUnit XML report (--junit): one testsuite per directory of scenario files,
// one testcase per scenario, its failure naming the first unmet expectation, as CI
// systems read it.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Time      string      `xml:"time,attr"`
		Timestamp string      `xml:"timestamp,attr"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		File      string        `xml:"file,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		Skipped   *junitSkipped `xml:"skipped,omitempty"`
		SystemOut *junitText    `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
)

func seconds3(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the JUnit XML report of s to w.
func WriteJUnit(w io.Writer, s *Result) error {
	doc := junitSuites{Name: "switchboard test", Tests: len(s.Outcomes), Failures: s.Failed, Skipped: s.Skipped, Time: seconds3(s.Elapsed)}
	index := map[string]int{}
	var times []time.Duration // per suite: the sum of its cases' times
	for _, out := range s.Outcomes {
		dir := filepath.ToSlash(filepath.Dir(out.ts.File))
		i, ok := index[dir]
		if !ok {
			i = len(doc.Suites)
			index[dir] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: dir, Timestamp: s.Started.UTC().Format(time.RFC3339)})
			times = append(times, 0)
		}
		suite := &doc.Suites[i]
		c := junitCase{Name: out.ts.Name, Classname: dir, File: filepath.ToSlash(out.ts.File), Time: seconds3(out.elapsed)}
		suite.Tests++
		switch {
		case !out.ran:
			c.Skipped = &junitSkipped{Message: "not run: interrupted"}
			suite.Skipped++
		case !out.passed:
			first := out.failures[0]
			c.Failure = &junitFailure{Message: first.Message, Type: first.Expectation, Text: failureText(out)}
			suite.Failures++
		}
		if out.ran {
			c.SystemOut = &junitText{Text: timelineText(out.result.Timeline)}
		}
		times[i] += out.elapsed
		suite.Time = seconds3(times[i])
		suite.Cases = append(suite.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func timelineText(tl []callctl.Event) string {
	var b strings.Builder
	for _, e := range tl {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}
