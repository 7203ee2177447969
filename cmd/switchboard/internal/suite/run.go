package suite

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/simulation"
)

// Run runs each scenario's call, parallel at a time, each under the real-time limit
// timeout, and reports each as it starts and ends. Once ctx ends no scenario starts:
// the rest are skipped (the reporter prints them with the summary).
func Run(ctx context.Context, run []*Scenario, parallel int, timeout time.Duration, rep *Reporter) *Result {
	res := &Result{Started: time.Now()}
	res.Outcomes = make([]*Outcome, len(run))
	for i, ts := range run {
		res.Outcomes[i] = &Outcome{ts: ts}
	}
	simulation.InParallel(ctx, len(run), parallel, func(i int) {
		out := res.Outcomes[i]
		rep.started(out)
		runOne(ctx, out, timeout)
		rep.ended(i, out)
	})
	res.Elapsed = time.Since(res.Started)
	for _, out := range res.Outcomes {
		switch {
		case !out.ran:
			res.Skipped++
		case out.passed:
			res.Passed++
		default:
			res.Failed++
		}
	}
	return res
}

// runOne runs a scenario's call under the real-time limit and judges it.
func runOne(ctx context.Context, out *Outcome, timeout time.Duration) {
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
