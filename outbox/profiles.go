package outbox

import "github.com/switchboard-voice/switchboard/outbox/outboxdriver"

// Overrides changes any policy value of an endpoint's profile; nil fields keep the
// profile's. It is stored with the endpoint (outboxdriver.Overrides documents each
// field).
type (
	Overrides           = outboxdriver.Overrides
	ExponentialOverride = outboxdriver.ExponentialOverride
	// GoneAction says what a 410 Gone answer does.
	GoneAction = outboxdriver.GoneAction
	// RetryAfterAction says what a 429, or a 503 carrying Retry-After, does.
	RetryAfterAction = outboxdriver.RetryAfterAction
	// PausedAction says what happens to deliveries while their endpoint is paused.
	PausedAction = outboxdriver.PausedAction
	// AutoPauseAction says what the failure threshold does to an endpoint.
	AutoPauseAction = outboxdriver.AutoPauseAction
)

// Policy actions, the values of Overrides' action fields.
const (
	GonePause        = outboxdriver.GonePause
	GoneRemove       = outboxdriver.GoneRemove
	GoneDead         = outboxdriver.GoneDead
	RetryAfterIgnore = outboxdriver.RetryAfterIgnore
	RetryAfterDelay  = outboxdriver.RetryAfterDelay
	RetryAfterHold   = outboxdriver.RetryAfterHold
	PausedHold       = outboxdriver.PausedHold
	PausedLogFailed  = outboxdriver.PausedLogFailed
	PausedFail       = outboxdriver.PausedFail
	AutoPauseNone    = outboxdriver.AutoPauseNone
	AutoPausePause   = outboxdriver.AutoPausePause
	AutoPauseDisable = outboxdriver.AutoPauseDisable
)

// Profile names (Endpoint.Profile, EndpointSpec.Profile): each a named set of policy
// values, which Overrides changes per endpoint (docs/outbox.md §3).
const (
	ProfileSajn     = outboxdriver.ProfileSajn
	ProfileDigize   = outboxdriver.ProfileDigize
	ProfileLucibook = outboxdriver.ProfileLucibook
	// ProfileStandard is the default: the best of the three, plus what none has.
	ProfileStandard = outboxdriver.ProfileStandard
)
