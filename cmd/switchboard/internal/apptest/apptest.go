package apptest

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Run runs the scenarios c names and reports them on c.Stdout. It returns nil when
// every scenario selected passed or was skipped; an error wrapping ErrFailed when
// one failed, could not reach its app or was not run (the run was interrupted);
// one wrapping ErrUsage for bad usage or a bad file, when nothing was run; and any
// other error (a report that could not be written) as it is. With c.Watch it runs
// until ctx ends and returns the verdict of the last run.
func Run(ctx context.Context, c Config) error {
	c = c.WithDefaults()
	run, err := c.validate()
	if err != nil {
		return err
	}
	s, err := load(c)
	if err != nil {
		return err
	}
	cases := s.selected(run)
	if len(cases) == 0 {
		return usagef("no scenario matches --run %q (of %d)", c.Run, len(s.cases))
	}
	if c.List {
		list(c, cases)
		return nil
	}
	var junit *os.File
	if c.JUnit != "" {
		// Opened now, so that a report that cannot be written is known before the
		// calls are made.
		if junit, err = os.Create(c.JUnit); err != nil {
			return usagef("--junit: %v", err)
		}
		defer junit.Close()
	}
	logs := &logSink{}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usagef("--log-file: %v", err)
		}
		defer f.Close()
		logs.w = f
	}
	rn := &runner{cfg: c, logs: logs}
	as := &apps{c: c, logs: logs}
	defer as.close()
	if c.Watch {
		return rn.watch(ctx, as, run, s)
	}
	rep, err := rn.runOnce(ctx, as, s, cases)
	if err != nil {
		return err
	}
	if junit != nil {
		if err := writeJUnit(junit, rep); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	return verdictOf(ctx, rep)
}

// runOnce starts the apps cases need that are not running yet, runs cases and
// reports them, and under --update writes their snapshots.
func (rn *runner) runOnce(ctx context.Context, as *apps, s *suite, cases []*testCase) (*report, error) {
	rn.notStarted = ""
	hint := startHint
	if specs := startSpecs(rn.cfg, cases); len(specs) > 0 {
		hint = ""
		if err := as.startAll(ctx, as.notRunning(specs)); err != nil {
			rn.notStarted = err.Error()
		}
	}
	rn.appDown = as.down
	rep := rn.runReported(ctx, cases, hint)
	if rn.cfg.Update {
		written, unchanged, err := writeSnapshots(s.cases, rep)
		rn.reportSnapshots(written, unchanged)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// startHint follows the reason a scenario could not reach an app nobody started.
const startHint = `(is it running? give --start "CMD", or start: in the folder's ` + FolderConfigName + `)`

// runReported runs cases with the reporter c asks for, and prints the summary.
func (rn *runner) runReported(ctx context.Context, cases []*testCase, startHint string) *report {
	if rn.cfg.JSON {
		rn.rep = &jsonReporter{w: rn.cfg.Stdout, count: rn.cfg.Count, rate: rn.cfg.PassRate, verbose: rn.cfg.Verbose}
	} else {
		rn.rep = newTextReporter(rn.cfg.Stdout, cases, rn.cfg, startHint)
	}
	rep := rn.run(ctx, cases)
	rn.rep.summary(rep)
	return rep
}

// reportSnapshots says which snapshot files --update wrote, and how many it left
// as they were.
func (rn *runner) reportSnapshots(written []string, unchanged int) {
	for _, path := range written {
		if rn.cfg.JSON {
			(&jsonReporter{w: rn.cfg.Stdout}).emit(jsonSnapshotEvent{Action: "snapshot", File: path})
			continue
		}
		fmt.Fprintf(rn.cfg.Stdout, "wrote %s\n", path)
	}
	if unchanged > 0 && !rn.cfg.JSON {
		fmt.Fprintf(rn.cfg.Stdout, "%d snapshot file(s) unchanged\n", unchanged)
	}
}

// verdictOf is the error a run ends with: nil when every scenario passed or was
// skipped.
func verdictOf(ctx context.Context, rep *report) error {
	_, failed, errored, _, notRun := rep.tally()
	switch {
	case ctx.Err() != nil:
		return failedError{fmt.Sprintf("interrupted: %v", ctx.Err())}
	case failed+errored > 0:
		return failedError{fmt.Sprintf("%d of %d scenario(s) failed", failed+errored, len(rep.outcomes))}
	case notRun > 0:
		return failedError{fmt.Sprintf("%d of %d scenario(s) not run", notRun, len(rep.outcomes))}
	}
	return nil
}

// list prints the names of the scenarios selected, one per line (as go test -list
// does), or one JSON event each.
func list(c Config, cases []*testCase) {
	r := &jsonReporter{w: c.Stdout}
	for _, tc := range cases {
		if c.JSON {
			r.emit(jsonListEvent{Action: "list", Scenario: tc.name, File: tc.file, App: tc.app, SkipReason: tc.skip})
			continue
		}
		fmt.Fprintln(c.Stdout, tc.name)
	}
}

var _ io.Writer = (*logSink)(nil)
