package outbox

import (
	"os"
	"runtime/debug"
	"sync"
)

// defaultGCPercent is Config.GCPercent's default.
const defaultGCPercent = 400

var gcTuned sync.Once

// tuneGC sets the garbage collector's target (GOGC) to percent, once per process,
// unless the program chose one itself (gcTarget). A delivery allocates some 30 KB
// that dies at once (the request, the response, the rows read and written): at Go's
// default target the collector runs many times a second under load, on the cores the
// attempts and the store's single writer need (docs/outbox.md §5, "Engine defaults").
func tuneGC(percent int) {
	if percent < 0 {
		return
	}
	env := os.Getenv("GOGC")
	gcTuned.Do(func() {
		prev := debug.SetGCPercent(percent)
		if keep := gcTarget(percent, env, prev); keep != percent {
			debug.SetGCPercent(keep)
		}
	})
}

// gcTarget is the collector's target once the outbox asked for percent, the
// environment's GOGC being env and the target current: the program's own choice
// when it made one (GOGC set, or a target other than Go's default of 100), percent
// otherwise.
func gcTarget(percent int, env string, current int) int {
	if env != "" || current != 100 {
		return current
	}
	return percent
}
