package retry

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
)

// Ramp is fragment's ramp, whose waits fragment's TestRampDelay pins: retry k waits
// fragment.RampDelay(k), up to the largest k; there is no retry 0 or below.
func TestRampIsFragmentRamp(t *testing.T) {
	t.Parallel()
	for _, k := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 1_000_000, math.MaxInt} {
		if got, ok := (Ramp{}).Delay(k); !ok || got != fragment.RampDelay(k) {
			t.Errorf("Ramp retry %d = %v, %v; want %v", k, got, ok, fragment.RampDelay(k))
		}
	}
	for _, k := range []int{0, -3} {
		if _, ok := (Ramp{}).Delay(k); ok {
			t.Errorf("Ramp has no retry %d", k)
		}
	}
}

func TestExponential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Exponential
		want []time.Duration
	}{
		{"sajn: ×6 from 10 s, cap 12 h", Exponential{First: 10 * time.Second, Factor: 6, Cap: 12 * time.Hour},
			[]time.Duration{10 * time.Second, time.Minute, 6 * time.Minute, 36 * time.Minute, 216 * time.Minute, 12 * time.Hour, 12 * time.Hour}},
		{"digize: ×2 from 5 s, cap 1 h", Exponential{First: 5 * time.Second, Factor: 2, Cap: time.Hour},
			[]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
				320 * time.Second, 640 * time.Second, 1280 * time.Second, 2560 * time.Second, time.Hour}},
		{"no cap does not overflow", Exponential{First: time.Hour, Factor: 1000}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for k, w := range tt.want {
				if got, ok := tt.s.Delay(k + 1); !ok || got != w {
					t.Errorf("retry %d = %v, want %v", k+1, got, w)
				}
			}
			for k := 1; k < 200; k++ {
				if got, _ := tt.s.Delay(k); got < 0 {
					t.Fatalf("retry %d overflowed to %v", k, got)
				}
			}
		})
	}
}

func TestFixed(t *testing.T) {
	t.Parallel()
	lucibook := Fixed{60 * time.Second, 300 * time.Second, 1800 * time.Second, 7200 * time.Second, 43200 * time.Second}
	for k, w := range lucibook {
		if got, ok := lucibook.Delay(k + 1); !ok || got != w {
			t.Errorf("retry %d = %v, want %v", k+1, got, w)
		}
	}
	if _, ok := lucibook.Delay(6); ok {
		t.Error("a fixed schedule runs out after its list")
	}
	if _, ok := lucibook.Delay(0); ok {
		t.Error("no retry 0")
	}
}

func TestRepeatLast(t *testing.T) {
	t.Parallel()
	s := RepeatLast{10 * time.Second, time.Minute}
	for k, want := range map[int]time.Duration{1: 10 * time.Second, 2: time.Minute, 3: time.Minute, 50: time.Minute} {
		if got, ok := s.Delay(k); !ok || got != want {
			t.Errorf("retry %d = %v %v, want %v", k, got, ok, want)
		}
	}
	if _, ok := s.Delay(0); ok {
		t.Error("no retry 0")
	}
	if _, ok := (RepeatLast{}).Delay(1); ok {
		t.Error("an empty list has no retry")
	}
}

func TestJitterBounds(t *testing.T) {
	t.Parallel()
	base := Fixed{10 * time.Second, time.Hour}
	j := Jittered{Schedule: base, Fraction: 0.1, Rand: rand.New(rand.NewPCG(1, 2))}
	var spread [2]struct{ lo, hi time.Duration }
	for k := range spread {
		spread[k].lo, spread[k].hi = time.Duration(1<<62), 0
	}
	for range 10_000 {
		for k := range 2 {
			want, _ := base.Delay(k + 1)
			got, ok := j.Delay(k + 1)
			if !ok {
				t.Fatal("jitter ended the schedule")
			}
			lo, hi := time.Duration(float64(want)*0.9), time.Duration(float64(want)*1.1)
			if got < lo || got > hi {
				t.Fatalf("retry %d jittered to %v, outside [%v, %v]", k+1, got, lo, hi)
			}
			spread[k].lo, spread[k].hi = min(spread[k].lo, got), max(spread[k].hi, got)
		}
	}
	// The spread must actually use the range, or jitter is not happening.
	if spread[0].hi-spread[0].lo < 1900*time.Millisecond {
		t.Errorf("jitter of 10 s only spans %v..%v", spread[0].lo, spread[0].hi)
	}
	// The same seed gives the same waits: tests can pin them.
	a := Jittered{Schedule: base, Fraction: 0.1, Rand: rand.New(rand.NewPCG(7, 7))}
	b := Jittered{Schedule: base, Fraction: 0.1, Rand: rand.New(rand.NewPCG(7, 7))}
	for k := 1; k <= 2; k++ {
		x, _ := a.Delay(k)
		y, _ := b.Delay(k)
		if x != y {
			t.Errorf("seeded jitter differs: %v vs %v", x, y)
		}
	}
	if _, ok := j.Delay(3); ok {
		t.Error("jitter must not extend a schedule")
	}
	noRand := Jittered{Schedule: base, Fraction: 0.1}
	if got, _ := noRand.Delay(1); got != 10*time.Second {
		t.Errorf("nil Rand must leave the wait unchanged, got %v", got)
	}
}
