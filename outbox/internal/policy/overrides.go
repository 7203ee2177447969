package policy

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// Limits on overridable values, so that one endpoint cannot make the dispatcher hold a
// lease longer than it lasts or retry without bound.
const (
	maxAttemptsLimit = 100
	maxTimeout       = 60 * time.Second
	maxWait          = 7 * 24 * time.Hour
)

// Resolve applies o to the named profile ("" means standard). It fails with a
// *ValidationError naming the field when the profile is unknown or a value is out of
// range. An invalid deliveryHeader is left out and a schedule of more than 99 waits
// is cut at 100 attempts: CheckNew, run where endpoints are written, refuses both.
func Resolve(profile string, o outboxdriver.Overrides) (Policy, error) {
	if profile == "" {
		profile = outboxdriver.ProfileStandard
	}
	p, ok := Profile(profile)
	if !ok {
		return Policy{}, invalid("profile", "unknown profile %q (want one of sajn, digize, lucibook, standard)", profile)
	}
	if o.ScheduleSeconds != nil && o.Exponential != nil {
		return Policy{}, invalid("overrides", "scheduleSeconds and exponential are exclusive")
	}
	if o.ScheduleSeconds != nil {
		for _, s := range o.ScheduleSeconds {
			if err := checkSeconds("overrides.scheduleSeconds", s, 0, maxWait); err != nil {
				return Policy{}, err
			}
		}
		p.Waits = seconds(o.ScheduleSeconds...)
		// Unless overridden below; never past the limit (CheckNew refuses a
		// longer list where endpoints are written).
		p.MaxAttempts = min(len(p.Waits)+1, maxAttemptsLimit)
	}
	if e := o.Exponential; e != nil {
		if err := checkSeconds("overrides.exponential.firstSeconds", e.FirstSeconds, 0, maxWait); err != nil {
			return Policy{}, err
		}
		if err := checkSeconds("overrides.exponential.capSeconds", e.CapSeconds, 0, maxWait); err != nil {
			return Policy{}, err
		}
		if e.Factor < 1 || e.Factor > 100 || math.IsNaN(e.Factor) {
			return Policy{}, invalid("overrides.exponential.factor", "must be in [1, 100], got %v", e.Factor)
		}
		p.Waits = nil
		p.First, p.Factor, p.Cap = secs(e.FirstSeconds), e.Factor, secs(e.CapSeconds)
	}
	if o.MaxAttempts != nil {
		if *o.MaxAttempts < 1 || *o.MaxAttempts > maxAttemptsLimit {
			return Policy{}, invalid("overrides.maxAttempts", "must be in [1, %d], got %d", maxAttemptsLimit, *o.MaxAttempts)
		}
		p.MaxAttempts = *o.MaxAttempts
	}
	if o.Jitter != nil {
		if *o.Jitter < 0 || *o.Jitter > 0.5 || math.IsNaN(*o.Jitter) {
			return Policy{}, invalid("overrides.jitter", "must be in [0, 0.5], got %v", *o.Jitter)
		}
		p.Jitter = *o.Jitter
	}
	durations := []struct {
		field string
		v     *float64
		min   time.Duration
		max   time.Duration
		dst   *time.Duration
	}{
		{"overrides.timeoutSeconds", o.TimeoutSeconds, time.Millisecond, maxTimeout, &p.Timeout},
		{"overrides.holdDefaultSeconds", o.HoldDefaultSeconds, 0, maxWait, &p.HoldDefault},
		{"overrides.maxRetryAfterSeconds", o.MaxRetryAfterSeconds, 0, maxWait, &p.MaxRetryAfter},
		{"overrides.autoPauseAfterSeconds", o.AutoPauseAfterSecs, 0, 30 * 24 * time.Hour, &p.AutoPauseAfter},
		{"overrides.faultRetrySeconds", o.FaultRetrySeconds, time.Millisecond, maxWait, &p.FaultRetry},
		{"overrides.faultWindowSeconds", o.FaultWindowSeconds, 0, maxWait, &p.FaultWindow},
	}
	for _, d := range durations {
		if d.v == nil {
			continue
		}
		if err := checkSeconds(d.field, *d.v, d.min, d.max); err != nil {
			return Policy{}, err
		}
		*d.dst = secs(*d.v)
	}
	setGiven(&p.AllowHTTP, o.AllowHTTP)
	setGiven(&p.CountThrottled, o.CountThrottled)
	setGiven(&p.EgressDead, o.EgressDead)
	setGiven(&p.ReapDead, o.ReapDead)
	if o.DeliveryHeader != nil && checkDeliveryHeader(*o.DeliveryHeader) == nil {
		// An invalid one is left out: refused where endpoints are written
		// (CheckNew), it could only come from a store written before.
		p.DeliveryHeader = *o.DeliveryHeader
	}
	if err := setAction(&p.OnGone, o.OnGone, "overrides.onGone",
		outboxdriver.GonePause, outboxdriver.GoneRemove, outboxdriver.GoneDead); err != nil {
		return Policy{}, err
	}
	retryAfter := []outboxdriver.RetryAfterAction{outboxdriver.RetryAfterIgnore, outboxdriver.RetryAfterDelay, outboxdriver.RetryAfterHold}
	if err := setAction(&p.On429, o.On429, "overrides.on429", retryAfter...); err != nil {
		return Policy{}, err
	}
	if err := setAction(&p.On503, o.On503, "overrides.on503", retryAfter...); err != nil {
		return Policy{}, err
	}
	if err := setAction(&p.AutoPause, o.AutoPause, "overrides.autoPause",
		outboxdriver.AutoPauseNone, outboxdriver.AutoPausePause, outboxdriver.AutoPauseDisable); err != nil {
		return Policy{}, err
	}
	if o.AutoPauseFailures != nil {
		if *o.AutoPauseFailures < 1 {
			return Policy{}, invalid("overrides.autoPauseFailures", "must be at least 1, got %d", *o.AutoPauseFailures)
		}
		p.AutoPauseFailures = *o.AutoPauseFailures
	}
	if err := setAction(&p.WhilePaused, o.WhilePaused, "overrides.whilePaused",
		outboxdriver.PausedHold, outboxdriver.PausedLogFailed, outboxdriver.PausedFail); err != nil {
		return Policy{}, err
	}
	if o.MaxInFlight != nil {
		if *o.MaxInFlight < 1 || *o.MaxInFlight > 1000 {
			return Policy{}, invalid("overrides.maxInFlight", "must be in [1, 1000], got %d", *o.MaxInFlight)
		}
		p.MaxInFlight = *o.MaxInFlight
	}
	return p, nil
}

// setGiven sets *dst to *v when v is given.
func setGiven[T any](dst, v *T) {
	if v != nil {
		*dst = *v
	}
}

// setAction sets *dst to *v when v is given and is one of allowed; any other value
// is an invalid field.
func setAction[T ~string](dst, v *T, field string, allowed ...T) error {
	if v == nil {
		return nil
	}
	if !slices.Contains(allowed, *v) {
		return invalid(field, "unknown action %q", *v)
	}
	*dst = *v
	return nil
}

func checkSeconds(field string, v float64, lo, hi time.Duration) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo.Seconds() || v > hi.Seconds() {
		return invalid(field, "must be between %v and %v seconds, got %v", lo.Seconds(), hi.Seconds(), v)
	}
	return nil
}

func secs(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// CheckNew checks what an endpoint's overrides must satisfy when it is
// created or changed, beyond Resolve: rules that came after endpoints were first
// stored, which Resolve tolerates so that such an endpoint keeps its policy.
func CheckNew(o outboxdriver.Overrides) error {
	if len(o.ScheduleSeconds) > maxAttemptsLimit-1 {
		return invalid("overrides.scheduleSeconds", "at most %d waits (%d attempts), got %d", maxAttemptsLimit-1, maxAttemptsLimit, len(o.ScheduleSeconds))
	}
	if o.DeliveryHeader != nil {
		return checkDeliveryHeader(*o.DeliveryHeader)
	}
	return nil
}

// reservedHeaders are the headers an attempt sets itself: a delivery header may not
// replace them (a webhook-signature carrying the delivery id would not verify).
var reservedHeaders = []string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-type",
	"content-length", "user-agent", "host", "connection", "transfer-encoding", "authorization"}

// checkDeliveryHeader accepts an HTTP header name (RFC 9110 token, at most 64
// characters) that an attempt does not set itself; "" sends none.
func checkDeliveryHeader(name string) error {
	if name == "" {
		return nil
	}
	if len(name) > 64 {
		return invalid("overrides.deliveryHeader", "at most 64 characters")
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return invalid("overrides.deliveryHeader", "%q is not an HTTP header name", name)
		}
	}
	if slices.Contains(reservedHeaders, strings.ToLower(name)) {
		return invalid("overrides.deliveryHeader", "%s is set by every attempt and cannot carry the delivery id", name)
	}
	return nil
}
