package apptest

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"
)

// The JUnit XML report (--junit): one testsuite per directory of scenario files,
// one testcase per scenario, as CI systems read it: a failure names the first unmet
// expectation, an error the reason the app could not be reached, a skip its reason;
// a scenario run several times carries its runs and pass rate as properties.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
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
		Name       string           `xml:"name,attr"`
		Classname  string           `xml:"classname,attr"`
		File       string           `xml:"file,attr"`
		Line       int              `xml:"line,attr,omitempty"`
		Time       string           `xml:"time,attr"`
		Properties *junitProperties `xml:"properties,omitempty"`
		Failure    *junitFailure    `xml:"failure,omitempty"`
		Error      *junitFailure    `xml:"error,omitempty"`
		Skipped    *junitSkipped    `xml:"skipped,omitempty"`
		SystemOut  *junitText       `xml:"system-out,omitempty"`
	}
	junitProperties struct {
		Property []junitProperty `xml:"property"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
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

// writeJUnit writes rep as a JUnit XML report.
func writeJUnit(w io.Writer, rep *report) error {
	_, failed, errored, skipped, notRun := rep.tally()
	doc := junitSuites{Name: "switchboard test", Tests: len(rep.outcomes), Failures: failed, Errors: errored,
		Skipped: skipped + notRun, Time: seconds3(rep.elapsed)}
	index := map[string]int{}
	var times []time.Duration // per suite: the sum of its cases' times
	for _, o := range rep.outcomes {
		dir := filepath.ToSlash(filepath.Dir(o.tc.file))
		i, ok := index[dir]
		if !ok {
			i = len(doc.Suites)
			index[dir] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: dir, Timestamp: rep.started.UTC().Format(time.RFC3339)})
			times = append(times, 0)
		}
		suite := &doc.Suites[i]
		c := junitCase{Name: o.tc.name, Classname: dir, File: filepath.ToSlash(o.tc.file), Line: o.tc.line, Time: seconds3(o.elapsed)}
		suite.Tests++
		if rep.count > 1 && o.verdict != verdictSkip && o.verdict != verdictNotRun {
			c.Properties = rateProperties(o, rep.count, rep.rate)
		}
		first := o.firstFailing()
		switch o.verdict {
		case verdictSkip, verdictNotRun:
			c.Skipped = &junitSkipped{Message: o.why}
			suite.Skipped++
		case verdictError:
			c.Error = &junitFailure{Message: first.errMsg, Type: "unreachable", Text: failureText(first)}
			suite.Errors++
		case verdictFail:
			c.Failure = &junitFailure{Message: "runs not made", Type: "runs"}
			if first != nil {
				f := first.failures[0]
				c.Failure = &junitFailure{Message: f.Message, Type: f.Expectation, Text: failureText(first)}
				if rep.count > 1 {
					c.Failure.Message = fmt.Sprintf("%s: run %d: %s", rateText(o, rep.count, rep.rate), first.run, f.Message)
				}
			}
			suite.Failures++
		}
		if run := shownRun(o); run != nil {
			c.SystemOut = &junitText{Text: timelineText(run.result.Timeline)}
		}
		times[i] += o.elapsed
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

// shownRun is the run a report shows of a scenario: its first failing one, else
// its last.
func shownRun(o *outcome) *runResult {
	if f := o.firstFailing(); f != nil {
		return f
	}
	return o.lastRun()
}

// rateProperties are a scenario's runs as JUnit properties: runs, passed_runs,
// pass_rate, required_pass_rate and failing_runs (their numbers, comma-separated).
func rateProperties(o *outcome, count int, rate float64) *junitProperties {
	passed, failing := o.counts()
	required := 1.0
	if rate > 0 {
		required = rate
	}
	nums := ""
	for i, f := range failing {
		if i > 0 {
			nums += ","
		}
		nums += strconv.Itoa(f.run)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return &junitProperties{Property: []junitProperty{
		{"runs", strconv.Itoa(count)}, {"passed_runs", strconv.Itoa(passed)},
		{"pass_rate", f(float64(passed) / float64(count))}, {"required_pass_rate", f(required)},
		{"failing_runs", nums},
	}}
}
