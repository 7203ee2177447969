package apptest

import (
	"fmt"

	"github.com/switchboard-voice/switchboard/cmd/switchboard/internal/apptest/snapshot"
)

// writeSnapshots records, under --update, each scenario's call as its snapshot: the
// first run that reached its app. Each scenario file's snapshot file keeps the
// entries of its cases not run (--run) and drops those of cases it no longer has.
// It returns the files written (changed) and how many were left as they were
// (their calls did what their snapshots say).
func writeSnapshots(all []*testCase, rep *report) (written []string, unchanged int, err error) {
	var order []*snapshot.File
	names := map[*snapshot.File][]string{} // every case of the file, in file order
	source := map[*snapshot.File]string{}
	for _, tc := range all {
		if _, seen := names[tc.snapshots]; !seen {
			order = append(order, tc.snapshots)
		}
		names[tc.snapshots] = append(names[tc.snapshots], tc.name)
		source[tc.snapshots] = tc.file
	}
	changed := map[*snapshot.File]bool{}
	for _, o := range rep.outcomes {
		for _, run := range o.runs {
			if run != nil && run.errMsg == "" {
				o.tc.snapshots.Entries[o.tc.name] = run.observed
				changed[o.tc.snapshots] = true
				break
			}
		}
	}
	for _, f := range order {
		if !changed[f] {
			continue
		}
		wrote, err := f.Write(source[f], names[f])
		if err != nil {
			return written, unchanged, fmt.Errorf("--update: %w", err)
		}
		if !wrote {
			unchanged++
			continue
		}
		written = append(written, f.Path)
	}
	return written, unchanged, nil
}
