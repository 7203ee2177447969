package outboxdriver

// Overrides changes any policy value for one endpoint; it is stored with the endpoint
// (as JSON, by a store that has no JSON column type). Nil fields keep the profile's
// value. Durations are in seconds so that an override is plain JSON
// ({"scheduleSeconds":[1,1], "maxAttempts":3}).
type Overrides struct {
	MaxAttempts *int `json:"maxAttempts,omitempty"`
	// ScheduleSeconds replaces the schedule with a fixed list of waits. Unless
	// MaxAttempts is overridden too, a run then makes one attempt more than the list
	// has waits (as lucibook's "schedule + 1"); a larger MaxAttempts repeats the last
	// wait.
	ScheduleSeconds []float64 `json:"scheduleSeconds,omitempty"`
	// Exponential replaces the schedule with First * Factor^(k-1), at most Cap.
	Exponential *ExponentialOverride `json:"exponential,omitempty"`

	Jitter               *float64          `json:"jitter,omitempty"`
	TimeoutSeconds       *float64          `json:"timeoutSeconds,omitempty"`
	AllowHTTP            *bool             `json:"allowHttp,omitempty"`
	OnGone               *GoneAction       `json:"onGone,omitempty"`
	On429                *RetryAfterAction `json:"on429,omitempty"`
	On503                *RetryAfterAction `json:"on503,omitempty"`
	CountThrottled       *bool             `json:"countThrottled,omitempty"`
	HoldDefaultSeconds   *float64          `json:"holdDefaultSeconds,omitempty"`
	MaxRetryAfterSeconds *float64          `json:"maxRetryAfterSeconds,omitempty"`
	EgressDead           *bool             `json:"egressDead,omitempty"`
	AutoPause            *AutoPauseAction  `json:"autoPause,omitempty"`
	AutoPauseFailures    *int              `json:"autoPauseFailures,omitempty"`
	AutoPauseAfterSecs   *float64          `json:"autoPauseAfterSeconds,omitempty"`
	WhilePaused          *PausedAction     `json:"whilePaused,omitempty"`
	ReapDead             *bool             `json:"reapDead,omitempty"`
	FaultRetrySeconds    *float64          `json:"faultRetrySeconds,omitempty"`
	FaultWindowSeconds   *float64          `json:"faultWindowSeconds,omitempty"`
	DeliveryHeader       *string           `json:"deliveryHeader,omitempty"`
	MaxInFlight          *int              `json:"maxInFlight,omitempty"`
}

// ExponentialOverride is an exponential schedule in seconds.
type ExponentialOverride struct {
	FirstSeconds float64 `json:"firstSeconds"`
	Factor       float64 `json:"factor"`
	CapSeconds   float64 `json:"capSeconds"`
}

// GoneAction says what a 410 Gone answer does.
type GoneAction string

// Gone actions.
const (
	// GonePause pauses the endpoint (reason HTTP_410); see WhilePaused for its
	// deliveries.
	GonePause GoneAction = "pause"
	// GoneRemove removes the endpoint, drops its waiting deliveries and writes an audit
	// entry.
	GoneRemove GoneAction = "remove"
	// GoneDead marks the delivery DEAD; the answer counts as a failure.
	GoneDead GoneAction = "dead"
)

// RetryAfterAction says what a 429, or a 503 carrying Retry-After, does.
type RetryAfterAction string

// Retry-After actions.
const (
	// RetryAfterIgnore treats the answer as an ordinary failure on the schedule.
	RetryAfterIgnore RetryAfterAction = "ignore"
	// RetryAfterDelay schedules this delivery's next attempt at Retry-After clamped to
	// [the scheduled wait, MaxRetryAfter]; without the header the schedule applies.
	RetryAfterDelay RetryAfterAction = "delay"
	// RetryAfterHold holds every delivery to the endpoint until Retry-After (HoldDefault
	// when missing or invalid, at most MaxRetryAfter).
	RetryAfterHold RetryAfterAction = "hold"
)

// PausedAction says what happens to deliveries while their endpoint is paused.
type PausedAction string

// Paused actions.
const (
	// PausedHold keeps waiting and new deliveries PENDING; resume releases them.
	PausedHold PausedAction = "hold"
	// PausedLogFailed writes each new event as a FAILED delivery with one attempt
	// numbered 0; waiting deliveries end FAILED with the pause's reason. Resume does
	// not resend them.
	PausedLogFailed PausedAction = "log_failed"
	// PausedFail ends waiting and new deliveries as FAILED without sending; after
	// resume they are replayed with Retry or Recover.
	PausedFail PausedAction = "fail"
)

// AutoPauseAction says what the failure threshold does to an endpoint.
type AutoPauseAction string

// Auto-pause actions.
const (
	AutoPauseNone    AutoPauseAction = "none"
	AutoPausePause   AutoPauseAction = "pause"
	AutoPauseDisable AutoPauseAction = "disable"
)

// Profile names: the values of Endpoint.Profile, each a named set of policy values
// (docs/outbox.md §3).
const (
	ProfileSajn     = "sajn"
	ProfileDigize   = "digize"
	ProfileLucibook = "lucibook"
	ProfileStandard = "standard"
)
