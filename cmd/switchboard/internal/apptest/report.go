package apptest

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/switchboard-voice/switchboard/callctl"
)

// reporter prints a run of scenarios as it goes.
type reporter interface {
	// started: a run of a scenario's call starts.
	started(tc *testCase, run int)
	// ended: a scenario's verdict is known (its runs are over, or it is skipped).
	ended(o *outcome)
	// summary ends the run.
	summary(r *report)
}

// textReporter prints one line per scenario in the order of the files whatever the
// order they end in, as go test does: ok, FAIL, ERROR or SKIP, the first failure
// and the timeline around it; with verbose each run's timeline and logs first.
type textReporter struct {
	mu       sync.Mutex
	w        io.Writer
	verbose  bool
	count    int
	passRate float64
	width    int // of the name column
	position map[*testCase]int
	done     []*outcome // by position, until printed
	next     int        // the next position to print
	// startHint, when set, is printed under a scenario that could not reach its app.
	startHint string
}

func newTextReporter(w io.Writer, cases []*testCase, c Config, startHint string) *textReporter {
	r := &textReporter{w: w, verbose: c.Verbose, count: c.Count, passRate: c.PassRate, position: map[*testCase]int{}, done: make([]*outcome, len(cases)), startHint: startHint}
	for i, tc := range cases {
		r.width = max(r.width, len(tc.name))
		r.position[tc] = i
	}
	return r
}

func (r *textReporter) started(*testCase, int) {}

func (r *textReporter) ended(o *outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done[r.position[o.tc]] = o
	for r.next < len(r.done) && r.done[r.next] != nil {
		r.print(r.done[r.next])
		r.done[r.next] = nil
		r.next++
	}
}

// print prints a scenario's block.
func (r *textReporter) print(o *outcome) {
	if r.verbose {
		for _, run := range o.runs {
			if run == nil {
				continue
			}
			fmt.Fprintf(r.w, "=== RUN   %s%s\n", o.tc.name, r.runSuffix(run.run))
			fmt.Fprint(r.w, indent(timelineText(run.result.Timeline), "      "))
			if logs := run.logs.String(); logs != "" {
				fmt.Fprint(r.w, indent(logs, "      log: "))
			}
		}
	}
	switch o.verdict {
	case verdictSkip, verdictNotRun:
		fmt.Fprintf(r.w, "SKIP  %-*s  (%s)\n", r.width, o.tc.name, o.why)
		return
	case verdictPass:
		fmt.Fprintf(r.w, "ok    %-*s  %.2fs%s\n", r.width, o.tc.name, o.elapsed.Seconds(), r.rate(o))
		fmt.Fprint(r.w, compatText(o))
		return
	case verdictError:
		fmt.Fprintf(r.w, "ERROR %-*s  %.2fs%s\n", r.width, o.tc.name, o.elapsed.Seconds(), r.rate(o))
	default:
		fmt.Fprintf(r.w, "FAIL  %-*s  %.2fs%s\n", r.width, o.tc.name, o.elapsed.Seconds(), r.rate(o))
	}
	first := o.firstFailing()
	if first == nil { // runs not made made it fail
		return
	}
	text := failureText(first)
	if r.count > 1 {
		text = fmt.Sprintf("run %d: %s", first.run, text)
	}
	if first.errMsg != "" && r.startHint != "" {
		text += r.startHint + "\n"
	}
	fmt.Fprint(r.w, indent(text, "      "))
	if o.verdict == verdictFail {
		fmt.Fprint(r.w, compatText(o))
	}
}

// compatText tells the compat warnings of a scenario its expect.compat does not
// name, a line each, under its verdict.
func compatText(o *outcome) string {
	var b strings.Builder
	for _, w := range o.unnamedCompat() {
		fmt.Fprintf(&b, "      compat %s: %s\n", w.Rule, w.Detail)
	}
	return b.String()
}

func (r *textReporter) runSuffix(run int) string {
	if r.count > 1 {
		return fmt.Sprintf(" #%d", run)
	}
	return ""
}

// rate says how many runs of a scenario run several times passed, and which failed.
func (r *textReporter) rate(o *outcome) string {
	if r.count < 2 {
		return ""
	}
	return "  " + rateText(o, r.count, r.passRate)
}

// rateText is "(9/10 runs passed, need 9; failed: run 4)".
func rateText(o *outcome, count int, rate float64) string {
	passed, failing := o.counts()
	made := 0
	for _, run := range o.runs {
		if run != nil {
			made++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(%d/%d runs passed", passed, count)
	if need := needed(count, rate); need < count {
		fmt.Fprintf(&b, ", need %d", need)
	}
	if len(failing) > 0 {
		var nums []string
		for _, f := range failing {
			nums = append(nums, fmt.Sprint(f.run))
		}
		fmt.Fprintf(&b, "; failed: run %s", strings.Join(nums, ", "))
	}
	if made < count {
		fmt.Fprintf(&b, "; %d not run", count-made)
	}
	b.WriteString(")")
	return b.String()
}

// failureText is why a run did not pass: the reason it could not be judged, or its
// first failure, the others named, and the timeline around the first (its line
// marked with >); then how its call differs from its snapshot.
func failureText(run *runResult) string {
	if run.errMsg != "" {
		return run.errMsg + "\n"
	}
	var b strings.Builder
	first := run.failures[0]
	fmt.Fprintf(&b, "%s\n", first.Message)
	if n := len(run.failures) - 1; n > 0 {
		var names []string
		for _, f := range run.failures[1:] {
			names = append(names, f.Expectation)
		}
		fmt.Fprintf(&b, "(and %d more: %s)\n", n, strings.Join(names, ", "))
	}
	if tl := run.result.Timeline; len(tl) > 0 && first.Expectation != "snapshot" {
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
	}
	b.WriteString(run.diff)
	return b.String()
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

func timelineText(tl []callctl.Event) string {
	var b strings.Builder
	for _, e := range tl {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// summary prints the run's last line.
func (r *textReporter) summary(rep *report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	passed, failed, errored, skipped, notRun := rep.tally()
	var extra []string
	if errored > 0 {
		extra = append(extra, fmt.Sprintf("%d error(s)", errored)) // ERROR lines: the app could not be reached, or started
	}
	extra = append(extra, fmt.Sprintf("%d passed", passed))
	if skipped > 0 {
		extra = append(extra, fmt.Sprintf("%d skipped", skipped))
	}
	if notRun > 0 {
		extra = append(extra, fmt.Sprintf("%d not run", notRun))
	}
	warned := ""
	if n := rep.warned(); n > 0 {
		warned = fmt.Sprintf("\n%d scenario(s) with compat warnings: jambonz would do what they say; name the rule in expect.compat if the app means it (--strict fails the others)", n)
	}
	if failed+errored+notRun == 0 {
		fmt.Fprintf(r.w, "\nPASS: %d scenario(s)", passed)
		if skipped > 0 {
			fmt.Fprintf(r.w, ", %d skipped,", skipped)
		}
		fmt.Fprintf(r.w, " in %.2fs%s\n", rep.elapsed.Seconds(), warned)
		return
	}
	fmt.Fprintf(r.w, "\nFAIL: %d of %d scenario(s) failed, %s, in %.2fs%s\n", failed+errored, len(rep.outcomes), strings.Join(extra, ", "), rep.elapsed.Seconds(), warned)
}
