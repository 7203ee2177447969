package fragment

import (
	"bytes"
	"encoding/json"
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

// MarshalJSON writes the explanation as `switchboard fragment explain --json` prints
// it, a stable contract (docs/cli.md): every key always present, durations in whole
// milliseconds, lists never null.
func (e Explanation) MarshalJSON() ([]byte, error) {
	p := e.Target.Policy
	out := struct {
		URL                     string   `json:"url"`
		CleanURL                string   `json:"clean_url"`
		Transport               string   `json:"transport"`
		RC                      int      `json:"rc"`
		RCDefault               bool     `json:"rc_default"`
		RP                      []string `json:"rp"`
		RPExplicit              bool     `json:"rp_explicit"`
		HandshakeTimeoutRetried bool     `json:"handshake_timeout_retried"`
		MaxAttempts             int      `json:"max_attempts"`
		DelaysMS                []int64  `json:"delays_ms"`
		TotalDelayMS            int64    `json:"total_delay_ms"`
		AttemptTimeoutMS        int64    `json:"attempt_timeout_ms"`
		AttemptsToFailure       int      `json:"attempts_to_failure"`
		TimeToFailureMS         int64    `json:"time_to_failure_ms"`
		IgnoredKeys             []string `json:"ignored_keys"`
		Warnings                []string `json:"warnings"`
	}{
		URL:                     e.Target.Raw,
		CleanURL:                e.Target.Clean(),
		Transport:               string(p.Transport),
		RC:                      p.RetryCount,
		RCDefault:               p.RetryCountDefault,
		RP:                      make([]string, len(p.RetryOn)),
		RPExplicit:              p.RetryOnExplicit,
		HandshakeTimeoutRetried: p.RetriesHandshakeTimeout(),
		MaxAttempts:             p.MaxAttempts(),
		DelaysMS:                make([]int64, len(e.Delays)),
		TotalDelayMS:            e.TotalDelay.Milliseconds(),
		AttemptTimeoutMS:        e.AttemptTimeout.Milliseconds(),
		AttemptsToFailure:       e.AttemptsToFailure,
		TimeToFailureMS:         e.TimeToFailure.Milliseconds(),
		IgnoredKeys:             append([]string{}, e.Target.IgnoredKeys...),
		Warnings:                append([]string{}, p.Warnings...),
	}
	for i, c := range p.RetryOn {
		out.RP[i] = string(c)
	}
	for i, d := range e.Delays {
		out.DelaysMS[i] = d.Milliseconds()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // URLs keep their & as written
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
