package retry

import (
	"math"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"delta seconds", "120", 120 * time.Second, true},
		{"zero", "0", 0, true},
		{"surrounding space", "  30 ", 30 * time.Second, true},
		{"IMF-fixdate", "Wed, 21 Oct 2015 07:30:00 GMT", 2 * time.Minute, true},
		{"RFC 850", "Wednesday, 21-Oct-15 07:29:00 GMT", time.Minute, true},
		{"asctime", "Wed Oct 21 07:28:30 2015", 30 * time.Second, true},
		{"past date is now", "Wed, 21 Oct 2015 07:00:00 GMT", 0, true},
		{"huge seconds saturate", "99999999999999999999999999", time.Duration(math.MaxInt64), true},
		{"seconds beyond Duration saturate", "9223372037", time.Duration(math.MaxInt64), true},
		{"empty is absent", "", 0, false},
		{"blank is absent", "   ", 0, false},
		{"negative is absent", "-5", 0, false},
		{"decimal is absent", "1.5", 0, false},
		{"garbage is absent", "soon", 0, false},
		{"plus sign is absent", "+5", 0, false},
		{"date without zone is absent", "2015-10-21T07:30:00", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseRetryAfter(tt.value, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestClamp(t *testing.T) {
	t.Parallel()
	tests := []struct{ d, lo, hi, want time.Duration }{
		{5 * time.Second, time.Minute, 12 * time.Hour, time.Minute},
		{time.Hour, time.Minute, 12 * time.Hour, time.Hour},
		{48 * time.Hour, time.Minute, 12 * time.Hour, 12 * time.Hour},
		{time.Duration(math.MaxInt64), 0, 12 * time.Hour, 12 * time.Hour},
		{time.Second, time.Minute, 0, time.Minute}, // hi below lo: lo wins
	}
	for _, tt := range tests {
		if got := Clamp(tt.d, tt.lo, tt.hi); got != tt.want {
			t.Errorf("Clamp(%v, %v, %v) = %v, want %v", tt.d, tt.lo, tt.hi, got, tt.want)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "Wednesday, 21-Oct-15 07:28:00 GMT",
		"Wed Oct 21 07:28:00 2015", "1e9", "99999999999999999999", "\x00", "Mon, 02 Jan 2006 15:04:05 MST"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, now)
		if !ok && d != 0 {
			t.Fatalf("absent value with duration %v", d)
		}
		if d < 0 {
			t.Fatalf("negative wait %v for %q", d, v)
		}
		if c := Clamp(d, time.Minute, 12*time.Hour); c < time.Minute || c > 12*time.Hour {
			t.Fatalf("clamp out of range: %v", c)
		}
	})
}
