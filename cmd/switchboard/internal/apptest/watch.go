package apptest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settle is how long the files must be quiet after a change before the scenarios
// run again: an editor's save, a git checkout or a build is many events.
const settle = 200 * time.Millisecond

// watchGroup is what a change under its paths runs again: its cases, after
// restarting its app when one was started for them.
type watchGroup struct {
	paths []string // absolute
	spec  *appSpec // nil: no app to restart
	cases []*testCase
}

// watchGroups are the apps' files to watch: those of each app started (--start: the
// current directory; start: its dir, or watch:), and a folder's watch: without
// start: (an app that reloads itself).
func watchGroups(c Config, cases []*testCase) []*watchGroup {
	var groups []*watchGroup
	for _, spec := range startSpecs(c, cases) {
		groups = append(groups, &watchGroup{paths: absAll(spec.watch), spec: spec, cases: spec.cases})
	}
	byFolder := map[*folder]*watchGroup{}
	for _, tc := range cases {
		fo := tc.folder
		if fo.cfg.Watch == nil || (fo.cfg.Start != "" && !c.NoStart) || c.Start != "" {
			continue
		}
		g, ok := byFolder[fo]
		if !ok {
			var paths []string
			for _, w := range fo.cfg.Watch {
				paths = append(paths, filepath.Join(fo.dir, w))
			}
			g = &watchGroup{paths: absAll(paths)}
			byFolder[fo] = g
			groups = append(groups, g)
		}
		g.cases = append(g.cases, tc)
	}
	return groups
}

func absAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// watch runs the scenarios selected, then again each time their files or their
// apps' files change, until ctx ends; it returns the verdict of the last run.
func (rn *runner) watch(ctx context.Context, as *apps, run *regexp.Regexp, s *suite) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("--watch: %w", err)
	}
	defer w.Close()
	rep, err := rn.runOnce(ctx, as, s, s.selected(run))
	if err != nil {
		return err
	}
	last := verdictOf(context.Background(), rep)
	rn.watchAll(w, s, run)
	rn.waiting()
	// pending are the paths changed since the last run, each true when it did not
	// exist before (its first event created it).
	pending := map[string]bool{}
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return last
		case err := <-w.Errors:
			fmt.Fprintf(rn.cfg.Stderr, "switchboard: --watch: %v\n", err)
		case ev := <-w.Events:
			if !rn.relevant(ev) {
				continue
			}
			if _, seen := pending[ev.Name]; !seen {
				pending[ev.Name] = ev.Has(fsnotify.Create)
			}
			if ev.Has(fsnotify.Create) {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					addTree(w, ev.Name)
				}
			}
			quiet = time.After(settle)
		case <-quiet:
			quiet = nil
			changed := settled(pending)
			clear(pending)
			if len(changed) == 0 {
				continue
			}
			next, err := load(rn.cfg)
			if err != nil {
				fmt.Fprintf(rn.cfg.Stdout, "\n--- %s changed: %v\n", strings.Join(rel(changed), ", "), err)
				continue
			}
			s = next
			cases, restart := rn.affected(changed, s, run)
			rn.watchAll(w, s, run)
			if len(cases) == 0 {
				continue
			}
			for _, spec := range restart {
				as.restart(spec)
			}
			rn.announce(changed, cases, restart)
			if rep, err = rn.runOnce(ctx, as, s, cases); err != nil {
				return err
			}
			if ctx.Err() == nil {
				last = verdictOf(ctx, rep)
				rn.waiting()
			}
		}
	}
}

// settled are the paths of pending that changed something, in name order: not
// those that appeared and went again while the files settled (the temporary files
// of editors, sed -i and build tools).
func settled(pending map[string]bool) []string {
	var out []string
	for p, appeared := range pending {
		if appeared {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// watchAll watches every folder of scenario files, and the paths of every group.
func (rn *runner) watchAll(w *fsnotify.Watcher, s *suite, run *regexp.Regexp) {
	for _, fo := range s.folders {
		addWatch(w, fo.dir)
	}
	for _, g := range watchGroups(rn.cfg, s.selected(run)) {
		for _, p := range g.paths {
			addTree(w, p)
		}
	}
}

// addTree watches path: a file's directory, or a directory and those under it but
// hidden ones (.git) and node_modules.
func addTree(w *fsnotify.Watcher, path string) {
	info, err := os.Stat(path)
	if err != nil {
		return
	}
	if !info.IsDir() {
		addWatch(w, filepath.Dir(path))
		return
	}
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != path && skippedDir(d.Name()) {
			return filepath.SkipDir
		}
		addWatch(w, p)
		return nil
	})
}

func addWatch(w *fsnotify.Watcher, dir string) {
	if abs, err := filepath.Abs(dir); err == nil && !slices.Contains(w.WatchList(), abs) {
		_ = w.Add(abs) // a directory removed meanwhile is no matter
	}
}

func skippedDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__"
}

// relevant reports whether an event can change a run: not a permissions change,
// not a snapshot (--update writes them), not an editor's backup (file~, #file#),
// not the log or report files, nothing under a skipped directory.
func (rn *runner) relevant(ev fsnotify.Event) bool {
	base := filepath.Base(ev.Name)
	if ev.Op == fsnotify.Chmod || strings.HasSuffix(base, SnapshotSuffix) || strings.HasSuffix(base, "~") ||
		(len(base) > 1 && strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#")) {
		return false
	}
	for _, own := range []string{rn.cfg.LogFile, rn.cfg.JUnit} {
		if own != "" {
			if abs, err := filepath.Abs(own); err == nil && abs == ev.Name {
				return false
			}
		}
	}
	for _, part := range strings.Split(filepath.ToSlash(ev.Name), "/") {
		if part != "" && skippedDir(part) {
			return false
		}
	}
	return true
}

// affected are the cases a change of the paths runs again, and the apps to restart
// first: every case and app for a folder's settings; a scenario file's cases; the
// cases of a group whose paths hold a changed path.
func (rn *runner) affected(changed []string, s *suite, run *regexp.Regexp) (cases []*testCase, restart []*appSpec) {
	selected := s.selected(run)
	groups := watchGroups(rn.cfg, selected)
	add := func(tcs []*testCase) {
		for _, tc := range tcs {
			if !slices.Contains(cases, tc) {
				cases = append(cases, tc)
			}
		}
	}
	for _, p := range changed {
		if isFolderConfig(filepath.Base(p)) {
			for _, g := range groups {
				if g.spec != nil {
					restart = append(restart, g.spec)
				}
			}
			return selected, restart
		}
	}
	for _, p := range changed {
		if isScenarioFile(filepath.Base(p)) {
			add(slices.DeleteFunc(slices.Clone(selected), func(tc *testCase) bool {
				abs, err := filepath.Abs(tc.file)
				return err != nil || abs != p
			}))
			continue
		}
		for _, g := range groups {
			if slices.ContainsFunc(g.paths, func(root string) bool { return within(p, root) }) {
				add(g.cases)
				if g.spec != nil && !slices.Contains(restart, g.spec) {
					restart = append(restart, g.spec)
				}
			}
		}
	}
	slices.SortFunc(cases, func(a, b *testCase) int { return a.index - b.index })
	return cases, restart
}

// within reports whether path is root or under it.
func within(path, root string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../")
}

// waiting says that the run is over and the files are watched.
func (rn *runner) waiting() {
	if !rn.cfg.JSON {
		fmt.Fprintln(rn.cfg.Stdout, "watching for changes (Ctrl-C to stop)")
	}
}

// announce says what changed and what runs again.
func (rn *runner) announce(changed []string, cases []*testCase, restart []*appSpec) {
	if rn.cfg.JSON {
		(&jsonReporter{w: rn.cfg.Stdout}).emit(jsonChangeEvent{Action: "change", Files: rel(changed), Scenarios: len(cases)})
		return
	}
	again := ""
	if len(restart) > 0 {
		var cmds []string
		for _, s := range restart {
			cmds = append(cmds, s.command)
		}
		again = "; restarting " + strings.Join(cmds, ", ")
	}
	fmt.Fprintf(rn.cfg.Stdout, "\n--- %s changed: running %d scenario(s)%s\n", strings.Join(rel(changed), ", "), len(cases), again)
}

// rel writes paths relative to the current directory when they are under it.
func rel(paths []string) []string {
	wd, err := os.Getwd()
	var out []string
	for _, p := range paths {
		if r, rerr := filepath.Rel(wd, p); err == nil && rerr == nil && !strings.HasPrefix(r, "..") {
			p = r
		}
		out = append(out, p)
	}
	return out
}
