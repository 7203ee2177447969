package fragment

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"
)

func TestRampDelay(t *testing.T) {
	t.Parallel()
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		6 * time.Second, 8 * time.Second, 10 * time.Second, 12 * time.Second}
	for k, w := range want {
		if got := RampDelay(k + 1); got != w {
			t.Errorf("RampDelay(%d) = %v, want %v", k+1, got, w)
		}
	}
	if RampDelay(0) != 0 || RampDelay(-3) != 0 {
		t.Error("RampDelay of a non-positive retry must be 0")
	}
	// It never runs out and never wraps: 2 s a retry up to the largest Duration.
	if got := RampDelay(1_000_000); got != 1_999_996*time.Second {
		t.Errorf("RampDelay(1e6) = %v", got)
	}
	for _, k := range []int{5_000_000_000, 1 << 40, math.MaxInt} {
		if got := RampDelay(k); got != math.MaxInt64 {
			t.Errorf("RampDelay(%d) = %v, want the largest Duration", k, got)
		}
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	ms := func(v ...int64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		url           string
		timeouts      Timeouts
		delays        []time.Duration
		total         time.Duration
		attempts      int
		timeToFailure time.Duration
	}{
		{"wss://h/p#rc=5&rp=ct", Timeouts{}, ms(500, 1000, 2000, 4000, 6000), 13500 * time.Millisecond, 6, 22500 * time.Millisecond},
		{"wss://h/p", Timeouts{}, ms(500, 1000, 2000, 4000, 6000), 13500 * time.Millisecond, 1, 1500 * time.Millisecond},
		{"wss://h/p#rc=0", Timeouts{}, ms(), 0, 1, 1500 * time.Millisecond},
		{"https://h/p", Timeouts{}, ms(), 0, 1, 10 * time.Second},
		{"https://h/p#rc=9&rp=5xx,bogus", Timeouts{}, ms(500, 1000, 2000, 4000, 6000), 13500 * time.Millisecond, 1, 10 * time.Second},
		{"https://h/p#rc=2&rp=5xx,ct", Timeouts{}, ms(500, 1000), 1500 * time.Millisecond, 3, 31500 * time.Millisecond},
		{"https://h/p#rc=2&rp=all", Timeouts{HTTP: 3 * time.Second}, ms(500, 1000), 1500 * time.Millisecond, 3, 10500 * time.Millisecond},
		{"ws://h/p#rc=2&rp=all", Timeouts{WSHandshake: 100 * time.Millisecond}, ms(500, 1000), 1500 * time.Millisecond, 3, 1800 * time.Millisecond},
		{"ws://h/p#rc=3&rp=5xx", Timeouts{}, ms(500, 1000, 2000), 3500 * time.Millisecond, 1, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			e := Explain(mustParse(t, tt.url), tt.timeouts)
			if !slices.Equal(e.Delays, tt.delays) || e.TotalDelay != tt.total {
				t.Errorf("delays %v total %v, want %v total %v", e.Delays, e.TotalDelay, tt.delays, tt.total)
			}
			if e.AttemptsToFailure != tt.attempts || e.TimeToFailure != tt.timeToFailure {
				t.Errorf("attempts %d time to failure %v, want %d, %v", e.AttemptsToFailure, e.TimeToFailure, tt.attempts, tt.timeToFailure)
			}
		})
	}
}

// The JSON of an explanation has every key, lists never null, URLs as written.
func TestExplanationJSON(t *testing.T) {
	target, err := Parse("https://h/p?a=1&b=2")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(Explain(target, Timeouts{}))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "clean_url", "transport", "rc", "rc_default", "rp", "rp_explicit", "handshake_timeout_retried",
		"max_attempts", "delays_ms", "total_delay_ms", "attempt_timeout_ms", "attempts_to_failure", "time_to_failure_ms",
		"ignored_keys", "warnings"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in %s", k, raw)
		}
	}
	if got["delays_ms"] == nil || got["ignored_keys"] == nil || got["warnings"] == nil || got["url"] != "https://h/p?a=1&b=2" ||
		got["time_to_failure_ms"] != float64(10000) || len(got) != 16 {
		t.Errorf("JSON %s", raw)
	}
}
