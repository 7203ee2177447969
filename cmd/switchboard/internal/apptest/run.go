package apptest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/callctl/scenario"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/snapshot"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
)

// verdict is what became of a scenario.
type verdict int

const (
	verdictPass   verdict = iota
	verdictFail           // an expectation did not hold, or the call failed unexpectedly
	verdictError          // the call could not be judged: its application could not be reached
	verdictSkip           // skip: in its file
	verdictNotRun         // the run stopped first (interrupted, --fail-fast)
)

// runResult is one call of a scenario and its judgement.
type runResult struct {
	run      int // from 1
	result   *callctl.Result
	failures []scenario.Failure
	// errMsg, when set, is why the call could not be judged (the app could not be
	// reached), said first: the failures are what followed from it.
	errMsg  string
	passed  bool
	elapsed time.Duration
	logs    *lockedBuffer
	// observed is what a snapshot records of the call; diff, when set, how it
	// differs from the scenario's snapshot.
	observed snapshot.Call
	diff     string
}

// outcome is what became of one scenario: its runs and its verdict.
type outcome struct {
	tc      *testCase
	runs    []*runResult // by run - 1; nil for a run not made
	verdict verdict
	why     string // a skip's reason, or why it was not run
	elapsed time.Duration
	left    int // runs not yet accounted for
}

// passed is how many of its runs passed, failing the runs that did not.
func (o *outcome) counts() (passed int, failing []*runResult) {
	for _, r := range o.runs {
		switch {
		case r == nil:
		case r.passed:
			passed++
		default:
			failing = append(failing, r)
		}
	}
	return passed, failing
}

// firstFailing is the first run that did not pass, nil when none did not.
func (o *outcome) firstFailing() *runResult {
	_, failing := o.counts()
	if len(failing) == 0 {
		return nil
	}
	return failing[0]
}

// lastRun is the last run made, nil when none was.
func (o *outcome) lastRun() *runResult {
	for i := len(o.runs) - 1; i >= 0; i-- {
		if o.runs[i] != nil {
			return o.runs[i]
		}
	}
	return nil
}

// needed is how many of count runs must pass at rate (every one when rate is 0).
func needed(count int, rate float64) int {
	if rate <= 0 {
		return count
	}
	// 0.9 of 10 is 9, not 9.000000000000002 rounded up to 10.
	return int(math.Ceil(rate*float64(count) - 1e-9))
}

// decide sets the verdict of an outcome whose runs are all accounted for.
func (o *outcome) decide(count int, rate float64) {
	made := 0
	for _, r := range o.runs {
		if r != nil {
			made++
			o.elapsed += r.elapsed
		}
	}
	if made == 0 {
		o.verdict = verdictNotRun
		return
	}
	passed, failing := o.counts()
	switch {
	case passed >= needed(count, rate):
		o.verdict = verdictPass
	case len(failing) > 0 && failing[0].errMsg != "":
		o.verdict = verdictError
	default:
		o.verdict = verdictFail
	}
}

// unnamedCompat are the compat warnings of the scenario's runs that its
// expect.compat does not name, each once: what --strict fails. They are told with
// the scenario's verdict, so that the developer sees where jambonz would silently
// do something the app may not mean (docs/compatibility.md §2).
func (o *outcome) unnamedCompat() []callctl.Compat {
	named := o.tc.sc.Expectations().Compat
	var out []callctl.Compat
	for _, r := range o.runs {
		if r == nil || r.result == nil {
			continue
		}
		for _, w := range r.result.Compat {
			if !slices.Contains(named, w.Rule) && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// report is what a run of scenarios did.
type report struct {
	outcomes []*outcome // in file order
	started  time.Time
	elapsed  time.Duration
	count    int
	rate     float64
}

// warned counts the scenarios that passed or failed with compat warnings their
// expect.compat does not name.
func (r *report) warned() int {
	n := 0
	for _, o := range r.outcomes {
		if (o.verdict == verdictPass || o.verdict == verdictFail) && len(o.unnamedCompat()) > 0 {
			n++
		}
	}
	return n
}

// tally counts the outcomes by verdict.
func (r *report) tally() (passed, failed, errored, skipped, notRun int) {
	for _, o := range r.outcomes {
		switch o.verdict {
		case verdictPass:
			passed++
		case verdictFail:
			failed++
		case verdictError:
			errored++
		case verdictSkip:
			skipped++
		case verdictNotRun:
			notRun++
		}
	}
	return
}

// runner runs scenarios and reports them.
type runner struct {
	cfg  Config
	rep  reporter
	logs *logSink
	// appDown, when set, says why a call that reached no app could not: the app
	// started for it exited. Empty when it runs (or was not started).
	appDown func(tc *testCase) string
	// notStarted, when set, is why the apps could not be started: no call is made,
	// every scenario is an error that says so.
	notStarted string
}

// run runs each scenario cfg.Count times, cfg.Parallel calls at a time, and reports
// each scenario once its runs are over. Once ctx ends, or with --fail-fast once a
// scenario failed, no run starts: the scenarios left are reported as not run.
func (rn *runner) run(ctx context.Context, cases []*testCase) *report {
	c := rn.cfg
	rep := &report{started: time.Now(), count: c.Count, rate: c.PassRate}
	type job struct {
		out *outcome
		run int
	}
	var jobs []job
	for _, tc := range cases {
		o := &outcome{tc: tc, runs: make([]*runResult, c.Count), left: c.Count}
		rep.outcomes = append(rep.outcomes, o)
		if tc.skip != "" {
			o.verdict, o.why, o.left = verdictSkip, tc.skip, 0
			continue
		}
		for k := range c.Count {
			jobs = append(jobs, job{o, k + 1})
		}
	}
	for _, o := range rep.outcomes {
		if o.verdict == verdictSkip {
			rn.rep.ended(o)
		}
	}
	var mu sync.Mutex
	var stopped atomic.Bool
	simulation.InParallel(ctx, len(jobs), c.Parallel, func(i int) {
		j := jobs[i]
		var r *runResult
		switch {
		case rn.notStarted != "":
			r = &runResult{run: j.run, result: &callctl.Result{}, errMsg: rn.notStarted, logs: &lockedBuffer{}}
		case !stopped.Load():
			rn.rep.started(j.out.tc, j.run)
			r = rn.runOne(ctx, j.out.tc, j.run)
		}
		mu.Lock()
		defer mu.Unlock()
		j.out.runs[j.run-1] = r
		if j.out.left--; j.out.left > 0 {
			return
		}
		j.out.decide(c.Count, c.PassRate)
		if j.out.verdict == verdictNotRun {
			j.out.why = "not run: --fail-fast"
		}
		if c.FailFast && (j.out.verdict == verdictFail || j.out.verdict == verdictError) {
			stopped.Store(true)
		}
		rn.rep.ended(j.out)
	})
	// What is left was never handed out: the run was interrupted.
	for _, o := range rep.outcomes {
		if o.left > 0 {
			o.left = 0
			o.decide(c.Count, c.PassRate)
			if o.verdict == verdictNotRun {
				o.why = "not run: interrupted"
			}
			rn.rep.ended(o)
		}
	}
	rep.elapsed = time.Since(rep.started)
	return rep
}

// runOne places one call of a scenario under the real-time limit and judges it.
func (rn *runner) runOne(ctx context.Context, tc *testCase, run int) *runResult {
	ctx, cancel := context.WithTimeout(ctx, rn.cfg.Timeout)
	defer cancel()
	r := &runResult{run: run, logs: &lockedBuffer{}}
	o := tc.opts
	o.Logger = rn.logs.logger(r.logs, rn.cfg.LogLevel, tc.name, run)
	start := time.Now()
	res, err := callctl.Run(ctx, o)
	if err != nil { // validated when the file was loaded: cannot happen
		panic(err)
	}
	r.result, r.elapsed = res, time.Since(start)
	r.failures, r.passed = judge(tc, res, rn.cfg.Strict)
	r.observed = snapshot.Record(res, tc.snapshot)
	if !rn.cfg.Update {
		if f, diff := compareSnapshot(tc, r.observed); f != nil {
			r.failures, r.diff, r.passed = append(r.failures, *f), diff, false
		}
	}
	if !r.passed && !reachedApp(res) {
		r.errMsg = rn.unreachable(ctx, tc)
	}
	return r
}

// judge decides whether a call passed: every expectation held, and the call did
// not fail unless the scenario expects it. A call that failed with every expectation
// holding fails as the expectation "call". strict fails it on every compat warning
// the scenario's expect.compat does not name (--strict, docs/compatibility.md §2).
func judge(tc *testCase, r *callctl.Result, strict bool) ([]scenario.Failure, bool) {
	e := tc.sc.Expectations()
	failures := e.Evaluate(r)
	if strict {
		failures = append(failures, e.Strict(r)...)
	}
	if len(failures) > 0 {
		return failures, false
	}
	if r.Failed() && !e.ExpectFailure() {
		at := slices.IndexFunc(r.Timeline, func(x callctl.Event) bool { return x.Kind == callctl.KindAlert })
		if at < 0 {
			at = len(r.Timeline) - 1
		}
		return []scenario.Failure{{Expectation: "call", Event: at, Message: fmt.Sprintf(
			"call: ended %s (%s), SIP %d; a scenario that expects this names its reason or status", r.Status, r.Reason, r.SIPStatus)}}, false
	}
	return nil, true
}

// compareSnapshot compares a call with the scenario's snapshot, when it has one: an
// entry in its file's snapshot file, or, for a scenario that asks for a snapshot
// (snapshot:) or whose file has snapshots, a failure that there is none yet.
func compareSnapshot(tc *testCase, observed snapshot.Call) (*scenario.Failure, string) {
	if _, ok := tc.snapshots.Entries[tc.name]; !ok {
		if !tc.snapshots.Exists() && tc.snapshot.Payload == nil && tc.snapshot.Mask == nil {
			return nil, ""
		}
		return &scenario.Failure{Expectation: "snapshot", Event: -1, Message: fmt.Sprintf(
			"snapshot: %s has no snapshot of %s yet: record one with --update", tc.snapshots.Path, tc.name)}, ""
	}
	diff := tc.snapshots.DiffIn(tc.name, observed)
	if diff == "" {
		return nil, ""
	}
	return &scenario.Failure{Expectation: "snapshot", Event: -1, Message: fmt.Sprintf(
		"snapshot: the call differs from its snapshot in %s (- snapshot, + this call; --update records this one)", tc.snapshots.Path)}, diff
}

// reachedApp reports whether the application answered anything during the call.
func reachedApp(r *callctl.Result) bool {
	return slices.ContainsFunc(r.Requests, func(q callctl.Request) bool { return q.Answered })
}

// unreachable says why a call that reached nothing could not reach its app, or ""
// when the app accepts connections now (the call failed for its own reasons: a
// scenario's refused connections, a handshake the app did not answer).
func (rn *runner) unreachable(ctx context.Context, tc *testCase) string {
	if rn.appDown != nil {
		if why := rn.appDown(tc); why != "" {
			return why
		}
	}
	addr, err := hostPort(tc.app)
	if err != nil {
		return ""
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Sprintf("cannot reach the app at %s: %v", addr, err)
	}
	conn.Close()
	return ""
}

// hostPort is the host:port an application URL connects to.
func hostPort(app string) (string, error) {
	u, err := url.Parse(app)
	if err != nil {
		return "", err
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "80"
	if u.Scheme == "https" || u.Scheme == "wss" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// lockedBuffer is a bytes.Buffer written by a call's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logSink is where logs go besides each run's buffer: the --log-file, or nowhere.
type logSink struct {
	mu sync.Mutex
	w  interface{ Write([]byte) (int, error) } // nil: nowhere
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

// appLogger logs a started app's output lines.
func (s *logSink) appLogger(command string) zerolog.Logger {
	return zerolog.New(s).With().Timestamp().Str("app", command).Logger()
}

// logger is the logger of one run: JSON lines into its buffer and the sink, each
// naming the scenario and the run.
func (s *logSink) logger(buf *lockedBuffer, level zerolog.Level, name string, run int) zerolog.Logger {
	return zerolog.New(zerolog.MultiLevelWriter(buf, s)).Level(level).With().Timestamp().
		Str("scenario", name).Int("run", run).Logger()
}
