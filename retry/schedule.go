package retry

import (
	"math"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
)

// Schedule gives the wait before each retry.
type Schedule interface {
	// Delay returns the wait before retry k (k = 1 is the first retry) and false when
	// the schedule has no retry k.
	Delay(k int) (time.Duration, bool)
}

// Ramp is the call-control backoff: 0.5, 1, 2, 4, 6, 8, 10, ... s. It never runs out;
// the policy's attempt count bounds it.
type Ramp struct{}

// Delay implements Schedule.
func (Ramp) Delay(k int) (time.Duration, bool) {
	if k < 1 {
		return 0, false
	}
	return fragment.RampDelay(k), true
}

// Exponential waits First, then multiplies by Factor each retry, never above Cap (when
// Cap > 0). It never runs out.
type Exponential struct {
	First  time.Duration
	Factor float64
	Cap    time.Duration
}

// Delay implements Schedule.
func (e Exponential) Delay(k int) (time.Duration, bool) {
	if k < 1 {
		return 0, false
	}
	limit := time.Duration(math.MaxInt64)
	if e.Cap > 0 {
		limit = e.Cap
	}
	d := float64(e.First) * math.Pow(e.Factor, float64(k-1))
	// Compare in float64 before converting: float64(MaxInt64) rounds up to 2^63, which
	// would overflow a Duration.
	if math.IsNaN(d) || d >= float64(limit) {
		return limit, true
	}
	return time.Duration(d), true
}

// Fixed is an explicit list of waits; retry k uses element k-1 and there is no retry
// beyond the list.
type Fixed []time.Duration

// Delay implements Schedule.
func (f Fixed) Delay(k int) (time.Duration, bool) {
	if k < 1 || k > len(f) {
		return 0, false
	}
	return f[k-1], true
}

// RepeatLast is an explicit list of waits whose last wait repeats: retry k uses
// element k-1, or the last element beyond the list. It runs out only when empty;
// the policy's attempt count bounds it.
type RepeatLast []time.Duration

// Delay implements Schedule.
func (r RepeatLast) Delay(k int) (time.Duration, bool) {
	if k < 1 || len(r) == 0 {
		return 0, false
	}
	return r[min(k, len(r))-1], true
}

// Rand is a source of uniform numbers in [0, 1): *math/rand/v2.Rand satisfies it.
type Rand interface{ Float64() float64 }

// Jittered spreads each wait of Schedule uniformly over ±Fraction of it (0.1 = ±10 %),
// using Rand. A nil Rand or a Fraction of 0 leaves waits unchanged.
type Jittered struct {
	Schedule Schedule
	Fraction float64
	Rand     Rand
}

// Delay implements Schedule.
func (j Jittered) Delay(k int) (time.Duration, bool) {
	d, ok := j.Schedule.Delay(k)
	if !ok || j.Rand == nil || j.Fraction <= 0 {
		return d, ok
	}
	spread := (j.Rand.Float64()*2 - 1) * j.Fraction
	return time.Duration(float64(d) * (1 + spread)), true
}
