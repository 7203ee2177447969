package apptest

import "testing"

// needed is the runs that must pass: every one without a rate, the rate's share
// rounded up, and no float error making 0.9 of 10 into 10.
func TestNeeded(t *testing.T) {
	for _, tc := range []struct {
		count int
		rate  float64
		want  int
	}{{1, 0, 1}, {3, 0, 3}, {10, 0.9, 9}, {8, 0.75, 6}, {8, 0.8, 7}, {3, 0.5, 2}, {7, 1, 7}, {100, 0.01, 1}, {10, 0.7, 7}} {
		if got := needed(tc.count, tc.rate); got != tc.want {
			t.Errorf("needed(%d, %v) = %d, want %d", tc.count, tc.rate, got, tc.want)
		}
	}
}
