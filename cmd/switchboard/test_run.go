package main

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
)

// runScenarios runs each scenario's call, f.parallel at a time, and reports each as
// it starts and ends. Once ctx ends no scenario starts: the rest are skipped (the
// reporter prints them with the summary).
func runScenarios(ctx context.Context, run []*testScenario, f testFlags, rep *testReporter) *testSuite {
	suite := &testSuite{started: time.Now()}
	suite.outcomes = make([]*testOutcome, len(run))
	for i, ts := range run {
		suite.outcomes[i] = &testOutcome{ts: ts}
	}
	inParallel(ctx, len(run), f.parallel, func(i int) {
		out := suite.outcomes[i]
		rep.started(out)
		runOne(ctx, out, f.timeout)
		rep.ended(i, out)
	})
	suite.elapsed = time.Since(suite.started)
	for _, out := range suite.outcomes {
		switch {
		case !out.ran:
			suite.skipped++
		case out.passed:
			suite.passed++
		default:
			suite.failed++
		}
	}
	return suite
}

// runOne runs a scenario's call under the real-time limit and judges it.
func runOne(ctx context.Context, out *testOutcome, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	r, err := callctl.Run(ctx, out.ts.opts)
	if err != nil { // validated before the first call: cannot happen
		panic(err)
	}
	out.ran, out.result, out.elapsed = true, r, time.Since(start)
	out.failures, out.passed = judge(out.ts, r)
}
