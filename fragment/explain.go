package fragment

import (
	"math"
	"time"
)

// Default connect timeouts used by Explain when none is given (docs/call-control.md §7).
const (
	DefaultHTTPTimeout         = 10 * time.Second
	DefaultWSHandshakeTimeout  = 1500 * time.Millisecond
	firstRampDelay             = 500 * time.Millisecond
	rampDoublingLimit          = 2 * time.Second
	rampStepAfterDoublingLimit = 2 * time.Second
)

// RampDelay is the call-control backoff before retry k (k = 1, 2, ...): 500 ms, doubled
// while below 2 s, then 2 s more each time: 0.5, 1, 2, 4, 6, 8, 10 s. It returns 0 for
// k < 1. Package retry builds its call-control schedule on it.
func RampDelay(k int) time.Duration {
	if k < 1 {
		return 0
	}
	d, i := firstRampDelay, 1
	for ; i < k && d < rampDoublingLimit; i++ {
		d *= 2
	}
	// Then a step per retry, in one multiplication that saturates: any k is O(1).
	steps := time.Duration(k - i)
	if steps > (math.MaxInt64-d)/rampStepAfterDoublingLimit {
		return math.MaxInt64
	}
	return d + steps*rampStepAfterDoublingLimit
}

// Timeouts are the per-attempt connect costs used to compute the time to failure.
// Zero values mean the defaults.
type Timeouts struct {
	HTTP        time.Duration // JAMBONES_HTTP_TIMEOUT
	WSHandshake time.Duration // JAMBONES_WS_HANDSHAKE_TIMEOUT_MS
}

// Explanation says what a URL's policy means in practice.
type Explanation struct {
	Target Target
	// Delays holds the wait before each retry the policy allows (one per rc).
	Delays []time.Duration
	// TotalDelay is the sum of Delays.
	TotalDelay time.Duration
	// AttemptTimeout is what one attempt costs against a host that drops connects.
	AttemptTimeout time.Duration
	// AttemptsToFailure is the number of attempts made against such a host.
	AttemptsToFailure int
	// TimeToFailure is how long until the request is given up against such a host.
	TimeToFailure time.Duration
}

// Explain computes the delays of t's policy and its time to failure against a host
// that silently drops connection attempts: HTTP sees a connect timeout (`ct`); a
// WebSocket sees a handshake timeout, retried only when RetriesHandshakeTimeout.
func Explain(t Target, to Timeouts) Explanation {
	p := t.Policy
	e := Explanation{Target: t, Delays: make([]time.Duration, p.RetryCount)}
	for k := 1; k <= p.RetryCount; k++ {
		e.Delays[k-1] = RampDelay(k)
		e.TotalDelay += e.Delays[k-1]
	}
	retried := p.Retries(Connect)
	e.AttemptTimeout = to.HTTP
	if e.AttemptTimeout <= 0 {
		e.AttemptTimeout = DefaultHTTPTimeout
	}
	if p.Transport == WebSocket {
		retried = p.RetriesHandshakeTimeout()
		e.AttemptTimeout = to.WSHandshake
		if e.AttemptTimeout <= 0 {
			e.AttemptTimeout = DefaultWSHandshakeTimeout
		}
	}
	e.AttemptsToFailure = 1
	if retried {
		e.AttemptsToFailure = p.MaxAttempts()
	}
	e.TimeToFailure = time.Duration(e.AttemptsToFailure) * e.AttemptTimeout
	for _, d := range e.Delays[:e.AttemptsToFailure-1] {
		e.TimeToFailure += d
	}
	return e
}
