package benchkit

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestInterleaveAlternates: the baseline goes first in even rounds, ours in odd
// ones, and each round's ratio is ours ÷ baseline, summarised over the rounds.
func TestInterleaveAlternates(t *testing.T) {
	var order []string
	m := Measure{Name: "x", Unit: "µs"}
	ours := func(_ context.Context, r int) (map[string]float64, error) {
		order = append(order, "ours")
		return map[string]float64{"x": float64(10 * (r + 1))}, nil
	}
	base := func(_ context.Context, r int) (map[string]float64, error) {
		order = append(order, "base")
		return map[string]float64{"x": 10}, nil
	}
	res, err := Interleave(context.Background(), 4, []Measure{m}, ours, base)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"base", "ours", "ours", "base", "base", "ours", "ours", "base"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	r := res[0]
	if r.Ratio != (Stats{Min: 1, Median: 2.5, Max: 4}) || r.Ours != 25 || r.Baseline != 10 || r.Rounds != 4 || r.Unit != "µs" {
		t.Errorf("result %+v", r)
	}
}

func TestInterleaveErrors(t *testing.T) {
	ok := func(context.Context, int) (map[string]float64, error) { return map[string]float64{"x": 1}, nil }
	missing := func(context.Context, int) (map[string]float64, error) { return map[string]float64{"y": 1}, nil }
	boom := errors.New("boom")
	failing := func(context.Context, int) (map[string]float64, error) { return nil, boom }
	ms := []Measure{{Name: "x"}}
	if _, err := Interleave(context.Background(), 0, ms, ok, ok); err == nil {
		t.Error("0 rounds accepted")
	}
	if _, err := Interleave(context.Background(), 2, ms, ok, missing); err == nil || !strings.Contains(err.Error(), "x not measured") {
		t.Errorf("missing measure: %v", err)
	}
	if _, err := Interleave(context.Background(), 2, ms, failing, ok); !errors.Is(err, boom) {
		t.Errorf("failing side: %v", err)
	}
}

func TestSummarise(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Stats
	}{
		{nil, Stats{}}, {[]float64{3}, Stats{3, 3, 3}}, {[]float64{5, 1, 3}, Stats{1, 3, 5}}, {[]float64{4, 1, 2, 9}, Stats{1, 3, 9}},
	} {
		if got := Summarise(c.in); got != c.want {
			t.Errorf("Summarise(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestPlanCalls: calls spread evenly over as few processes as hold them, each on
// its own loopback address.
func TestPlanCalls(t *testing.T) {
	p, err := PlanCalls(100_000, 18_000)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, n := range p.PerProcess {
		if n > 18_000 {
			t.Errorf("a process holds %d", n)
		}
		sum += n
	}
	if p.Processes != 6 || sum != 100_000 || len(p.Addresses) != 6 || p.Addresses[5] != "127.0.0.6" {
		t.Errorf("plan %+v", p)
	}
	if p, err := PlanCalls(10, 0); err != nil || p.Processes != 1 || p.PerProcess[0] != 10 {
		t.Errorf("one process: %+v %v", p, err)
	}
	for _, bad := range [][2]int{{0, 10}, {-1, 0}, {1000, 1}} {
		if _, err := PlanCalls(bad[0], bad[1]); err == nil {
			t.Errorf("PlanCalls(%d, %d) accepted", bad[0], bad[1])
		}
	}
}
