package retry

import (
	"testing"
	"time"

	"github.com/switchboard-voice/switchboard/fragment"
)

func TestClassifyStatus(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]Class{
		100: UnexpectedStatus, 201: UnexpectedStatus, 301: Redirect, 302: Redirect, 308: Redirect,
		400: Status4xx, 404: Status4xx, 410: Gone, 429: Throttled, 499: Status4xx,
		500: Status5xx, 503: Status5xx, 599: Status5xx, 600: UnexpectedStatus, 0: UnexpectedStatus,
	} {
		if got := ClassifyStatus(code); got != want {
			t.Errorf("ClassifyStatus(%d) = %s, want %s", code, got, want)
		}
	}
	for code, want := range map[int]bool{200: true, 202: true, 204: true, 201: false, 203: false, 206: false, 302: false} {
		if CallControlSuccess(code) != want {
			t.Errorf("CallControlSuccess(%d) != %v", code, want)
		}
	}
}

// One row per retry rule of docs/call-control.md §1: which classes each rp retries.
func TestCallControlDecisions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url     string
		class   Class
		retried bool
	}{
		{"https://h/p#rc=3", Connect, true},
		{"https://h/p#rc=3", ResponseTimeout, false},
		{"https://h/p#rc=3", Status5xx, false},
		{"https://h/p#rc=3&rp=rt", ResponseTimeout, true},
		{"https://h/p#rc=3&rp=rt", Connect, false},
		{"https://h/p#rc=3&rp=4xx", Status4xx, true},
		{"https://h/p#rc=3&rp=4xx", Gone, true},
		{"https://h/p#rc=3&rp=4xx", Throttled, true},
		{"https://h/p#rc=3&rp=4xx", Status5xx, false},
		{"https://h/p#rc=3&rp=5xx", Status5xx, true},
		{"https://h/p#rc=3&rp=5xx,ct", Redirect, false},
		{"https://h/p#rc=3&rp=all", Redirect, true},
		{"https://h/p#rc=3&rp=all", UnexpectedStatus, true},
		{"https://h/p#rc=3&rp=all", Unparseable, true},
		{"https://h/p#rc=3&rp=all", ResponseTimeout, true},
		{"https://h/p#rc=3&rp=all", EgressRefused, false},
		{"https://h/p#rc=3&rp=all", Permanent, false},
		{"https://h/p#rc=3&rp=all", Internal, false},
		{"https://h/p#rc=3&rp=all", HandshakeTimeout, false}, // HTTP has no handshake timeout
		{"wss://h/p", HandshakeTimeout, false},               // default policy: not retried
		{"wss://h/p", Connect, true},
		{"wss://h/p#rc=2&rp=ct", HandshakeTimeout, true},
		{"wss://h/p#rc=2&rp=all", HandshakeTimeout, true},
		{"wss://h/p#rc=2&rp=5xx", HandshakeTimeout, false},
		{"wss://h/p#rc=2&rp=5xx", Connect, false},
		{"wss://h/p#rc=0", Connect, false}, // rc=0: no retries at all
		{"https://h/p", Connect, false},    // HTTP default rc is 0
	}
	for _, tt := range tests {
		t.Run(tt.url+"/"+string(tt.class), func(t *testing.T) {
			t.Parallel()
			target, err := fragment.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			d := NextAttempt(CallControl(target.Policy), Outcome{Class: tt.class}, 1)
			if d.Retry != tt.retried {
				t.Errorf("retry = %v (%s), want %v", d.Retry, d.Reason, tt.retried)
			}
			if d.Retry && d.Delay != 500*time.Millisecond {
				t.Errorf("first retry delay %v, want 500ms", d.Delay)
			}
			if !d.Retry && d.Reason == "" {
				t.Error("a give-up needs a reason")
			}
		})
	}
}

func TestNextAttemptCountsAttempts(t *testing.T) {
	t.Parallel()
	target, _ := fragment.Parse("https://h/p#rc=3&rp=5xx")
	p := CallControl(target.Policy)
	var delays []time.Duration
	attempt := 1
	for ; ; attempt++ {
		d := NextAttempt(p, Outcome{Class: Status5xx}, attempt)
		if !d.Retry {
			break
		}
		delays = append(delays, d.Delay)
	}
	if attempt != 4 {
		t.Errorf("gave up after attempt %d, want 4", attempt)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if len(delays) != len(want) {
		t.Fatalf("delays %v, want %v", delays, want)
	}
	for i := range want {
		if delays[i] != want[i] {
			t.Errorf("delay %d = %v, want %v", i+1, delays[i], want[i])
		}
	}
	if d := NextAttempt(p, Outcome{Class: Success}, 1); d.Retry {
		t.Error("success is never retried")
	}
}

func TestNextAttemptRetryAfter(t *testing.T) {
	t.Parallel()
	lucibook := Policy{
		MaxAttempts: 6,
		Schedule:    Fixed{60 * time.Second, 300 * time.Second, 1800 * time.Second, 7200 * time.Second, 43200 * time.Second},
		Retryable:   func(Class) bool { return true },
		RetryAfter:  &RetryAfterRule{Classes: []Class{Throttled, Status5xx}, Max: 12 * time.Hour, AtLeastScheduled: true},
	}
	tests := []struct {
		name    string
		o       Outcome
		attempt int
		want    time.Duration
	}{
		{"Retry-After below the scheduled wait is raised to it", Outcome{Class: Throttled, RetryAfter: 5 * time.Second, HasRetryAfter: true}, 1, 60 * time.Second},
		{"Retry-After inside the window is honoured", Outcome{Class: Status5xx, RetryAfter: time.Hour, HasRetryAfter: true}, 1, time.Hour},
		{"Retry-After above 12 h is clamped", Outcome{Class: Throttled, RetryAfter: 100 * time.Hour, HasRetryAfter: true}, 2, 12 * time.Hour},
		{"absent Retry-After uses the schedule", Outcome{Class: Throttled}, 2, 300 * time.Second},
		{"other classes ignore Retry-After", Outcome{Class: Status4xx, RetryAfter: time.Hour, HasRetryAfter: true}, 3, 1800 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := NextAttempt(lucibook, tt.o, tt.attempt)
			if !d.Retry || d.Delay != tt.want {
				t.Errorf("decision %+v, want retry after %v", d, tt.want)
			}
		})
	}
	if d := NextAttempt(lucibook, Outcome{Class: Status5xx}, 6); d.Retry {
		t.Error("6 attempts in all: no seventh")
	}
	short := lucibook
	short.MaxAttempts = 10
	if d := NextAttempt(short, Outcome{Class: Status5xx}, 6); d.Retry {
		t.Error("a fixed schedule that runs out ends the retries")
	}
}

// NextScheduled retries on the schedule until the attempts are spent or the
// schedule runs out; without a schedule it retries at once.
func TestNextScheduled(t *testing.T) {
	two := Fixed{time.Second, 2 * time.Second}
	for _, tc := range []struct {
		max, attempt int
		s            Schedule
		want         Decision
	}{
		{3, 1, two, Decision{Retry: true, Delay: time.Second}},
		{3, 3, two, Decision{Reason: "retries exhausted after 3 attempts"}},
		{9, 3, two, Decision{Reason: "schedule exhausted after 3 attempts"}},
		{0, 1, two, Decision{Reason: "retries exhausted after 1 attempts"}},
		{2, 1, nil, Decision{Retry: true}},
	} {
		if got := NextScheduled(tc.max, tc.s, tc.attempt); got != tc.want {
			t.Errorf("NextScheduled(%d, %v, %d) = %+v, want %+v", tc.max, tc.s, tc.attempt, got, tc.want)
		}
	}
}
