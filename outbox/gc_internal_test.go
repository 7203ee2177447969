package outbox

import "testing"

// TestGCTarget: the outbox raises the collector's target only where the program left
// Go's default: not over GOGC, nor over a target the program set.
func TestGCTarget(t *testing.T) {
	for _, c := range []struct {
		env           string
		current, want int
	}{
		{"", 100, 400},    // Go's default: raised
		{"100", 100, 100}, // GOGC=100 said explicitly
		{"off", -1, -1},   // GOGC=off
		{"", 200, 200},    // debug.SetGCPercent(200) by the program
		{"", -1, -1},      // debug.SetGCPercent(-1) by the program
	} {
		if got := gcTarget(400, c.env, c.current); got != c.want {
			t.Errorf("GOGC=%q, target %d: %d, want %d", c.env, c.current, got, c.want)
		}
	}
}
