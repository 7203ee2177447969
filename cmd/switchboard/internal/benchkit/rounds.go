package benchkit

import (
	"context"
	"fmt"
	"slices"
)

// Measure names one figure a bench reports for both sides.
type Measure struct {
	// Name is what is measured, e.g. "hook round trip".
	Name string
	// Unit of the figures, e.g. "µs", "B/call", "deliveries/s".
	Unit string
	// Better says which way the figure improves: Higher (a rate) or Lower (a time, a
	// size). A ratio ours ÷ baseline improves the same way.
	Better Direction
}

// Direction is which way a measure improves.
type Direction string

// Directions of Measure.Better.
const (
	Higher Direction = "higher"
	Lower  Direction = "lower"
)

// Side runs one side (ours or the baseline) once and returns a figure per measure,
// keyed by Measure.Name.
type Side func(ctx context.Context, round int) (map[string]float64, error)

// Stats are the minimum, median and maximum over the rounds.
type Stats struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Round is one round's figures of one measure.
type Round struct {
	Ours     float64 `json:"ours"`
	Baseline float64 `json:"baseline"`
	Ratio    float64 `json:"ratio"`
}

// Result is one measure over all rounds. Ours and Baseline are medians; Ratio is
// ours ÷ baseline per round, summarised.
type Result struct {
	Measure  string  `json:"measure"`
	Ours     float64 `json:"ours"`
	Baseline float64 `json:"baseline"`
	Ratio    Stats   `json:"ratio"`
	Unit     string  `json:"unit"`
	// Better says which way the measure, and its ratio, improves.
	Better   Direction `json:"better"`
	Rounds   int       `json:"rounds"`
	PerRound []Round   `json:"per_round"`
}

// Interleave runs ours and baseline rounds times each, alternating which goes first
// (baseline first in even rounds), and summarises every measure. A load that comes
// and goes on the machine then falls on both sides of most rounds; the median ratio
// is the figure to compare, its spread how far to trust it.
func Interleave(ctx context.Context, rounds int, measures []Measure, ours, baseline Side) ([]Result, error) {
	if rounds < 1 {
		return nil, fmt.Errorf("benchkit: rounds must be at least 1, got %d", rounds)
	}
	per := make([][]Round, len(measures))
	for r := range rounds {
		var o, b map[string]float64
		var err error
		if r%2 == 0 {
			if b, err = baseline(ctx, r); err == nil {
				o, err = ours(ctx, r)
			}
		} else {
			if o, err = ours(ctx, r); err == nil {
				b, err = baseline(ctx, r)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", r+1, err)
		}
		for i, m := range measures {
			ov, ok1 := o[m.Name]
			bv, ok2 := b[m.Name]
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("round %d: %s not measured on both sides", r+1, m.Name)
			}
			per[i] = append(per[i], Round{Ours: ov, Baseline: bv, Ratio: ratio(ov, bv)})
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]Result, len(measures))
	for i, m := range measures {
		out[i] = summarise(m, per[i])
	}
	return out, nil
}

// summarise is one measure's result from its rounds.
func summarise(m Measure, per []Round) Result {
	var os, bs, rs []float64
	for _, x := range per {
		os, bs, rs = append(os, x.Ours), append(bs, x.Baseline), append(rs, x.Ratio)
	}
	return Result{Measure: m.Name, Unit: m.Unit, Better: m.Better, Rounds: len(per), PerRound: per,
		Ours: Summarise(os).Median, Baseline: Summarise(bs).Median, Ratio: Summarise(rs)}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Summarise returns the min, median and max of xs (the mean of the middle two for
// an even count); zeros for none.
func Summarise(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stats{Min: s[0], Median: med, Max: s[len(s)-1]}
}
