package testkit

import "testing"

// recordingTB records what SkipMissing asks of its test instead of ending it.
type recordingTB struct {
	*testing.T
	fatal, skip string
}

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Fatalf(format string, args ...any) { r.fatal = format }
func (r *recordingTB) Skipf(format string, args ...any)  { r.skip = format }

func TestSkipMissing(t *testing.T) {
	var lines []string
	announceTo = func(line string) { lines = append(lines, line) }
	announce.mu.Lock()
	announce.done = map[string]bool{} // a fresh process, as -count runs the test again in this one
	announce.mu.Unlock()
	t.Cleanup(func() { announceTo = Announce })

	t.Setenv("CI", "")
	for range 2 {
		r := &recordingTB{T: t}
		SkipMissing(r, "Gizmo", "not installed:\n\tlook in /opt")
		if r.skip == "" || r.fatal != "" {
			t.Fatalf("outside CI: skip %q, fatal %q; want a skip", r.skip, r.fatal)
		}
	}
	if len(lines) != 1 || lines[0] != "SKIP internal/testkit: the tests that need Gizmo: not installed: look in /opt" {
		t.Fatalf("announced %q; want one line naming the package, the need and why", lines)
	}

	t.Setenv("CI", "true")
	r := &recordingTB{T: t}
	SkipMissing(r, "Gadget", "not installed")
	if r.fatal == "" || r.skip != "" || len(lines) != 1 {
		t.Fatalf("under CI: fatal %q, skip %q, %d lines; want a failure and no skip", r.fatal, r.skip, len(lines))
	}
}
