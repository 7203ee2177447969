package outboxdriver

import (
	"encoding/json"
	"time"
)

// Event is something that happened, published once and delivered to every matching
// endpoint of its account. Events are immutable and kept for the retention window.
type Event struct {
	// ID identifies the event; Publish generates one when empty. Publishing an ID that
	// exists again is idempotent: the stored event and its deliveries are returned.
	ID string `json:"id"`
	// Account owns the event; only the account's endpoints receive it.
	Account string `json:"account"`
	// Type is matched against endpoint filters, e.g. "call.status".
	Type string `json:"type"`
	// CreatedAt defaults to the time of publishing.
	CreatedAt time.Time `json:"createdAt"`
	// Data is the event's JSON payload.
	Data json.RawMessage `json:"data"`
	// Channels, when given, narrow the event to the endpoints that subscribed to one
	// of them (Endpoint.Channels); an event without channels reaches the endpoints
	// without channels.
	Channels []string `json:"channels,omitempty"`
	// Excluded names the endpoints that took the event's type and channels but whose
	// filter decided against it: no delivery was created for them. The store writes
	// it at publish from PublishParams.Exclude.
	Excluded []Exclusion `json:"excluded,omitempty"`
}

// Exclusion records that an endpoint got no delivery of an event although it takes
// the event's type and channels.
type Exclusion struct {
	EndpointID string `json:"endpointId"`
	// Reason is ExcludedByFilter.
	Reason string `json:"reason"`
}

// ExcludedByFilter is the reason of an endpoint whose filter did not match the event.
const ExcludedByFilter = "filter"

// TakesChannels reports whether an endpoint subscribed to endpoint channels takes an
// event of event channels: they share one, or neither has any.
func TakesChannels(endpoint, event []string) bool {
	if len(endpoint) == 0 || len(event) == 0 {
		return len(endpoint) == 0 && len(event) == 0
	}
	for _, c := range event {
		for _, e := range endpoint {
			if c == e {
				return true
			}
		}
	}
	return false
}

// EndpointStatus is the state of an endpoint.
type EndpointStatus string

// Endpoint states.
const (
	EndpointActive   EndpointStatus = "ACTIVE"
	EndpointPaused   EndpointStatus = "PAUSED"
	EndpointDisabled EndpointStatus = "DISABLED"
)

// Pause reasons: the last answer before an endpoint was paused or disabled.
const (
	ReasonGone      = "HTTP_410"
	ReasonThrottled = "HTTP_429"
	Reason4xx       = "HTTP_4xx"
	Reason5xx       = "HTTP_5xx"
	ReasonRedirect  = "HTTP_3xx"
	ReasonNetwork   = "NETWORK_ERROR"
	ReasonTimeout   = "TIMEOUT"
	ReasonManual    = "MANUAL"
)

// Secret is one signing key of an endpoint: "whsec_..." (Standard Webhooks v1, HMAC)
// or "whsk_..." (v1a, ed25519). During a rotation the old key keeps signing until
// ExpiresAt, so every attempt carries one signature per live key.
type Secret struct {
	Key       string     `json:"key"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// Endpoint is a subscriber URL with its filter, secrets, policy and health.
type Endpoint struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	URL     string `json:"url"`
	// Events filters event types; "*" (the default) takes every type.
	Events []string `json:"events"`
	// APIVersion is rendered into every attempt as it is at attempt time.
	APIVersion string `json:"apiVersion"`
	// Secrets sign every attempt; the first is the newest.
	Secrets []Secret `json:"-"`
	// Profile names the policy defaults ("standard" when empty); Overrides changes any
	// value of it for this endpoint.
	Profile   string    `json:"profile"`
	Overrides Overrides `json:"overrides"`
	// Managed endpoints were installed by an integration: never paused automatically.
	Managed bool `json:"managed"`
	// Headers are sent on every attempt (canonical names), under the headers the
	// outbox sets itself. Values may be credentials: never logged.
	Headers map[string]string `json:"-"`
	// Channels, when given, are the only channels the endpoint takes events of
	// (TakesChannels).
	Channels []string `json:"channels,omitempty"`
	// Filter, when not empty, is the JSON condition on an event's data that decides
	// whether the endpoint gets a delivery of it (docs/outbox.md §1, filters).
	Filter json.RawMessage `json:"filter,omitempty"`
	// RateLimit caps the deliveries the endpoint starts per second, across every node
	// sharing the store (0: none). Claims take from a bucket of RateLimit tokens that
	// refills at RateLimit per second (RateRoom); deliveries over it wait, due,
	// without using an attempt.
	RateLimit int `json:"rateLimit,omitempty"`

	Status         EndpointStatus `json:"status"`
	Failures       int            `json:"failures"`
	FailingSince   *time.Time     `json:"failingSince,omitempty"`
	LastDeliveryAt *time.Time     `json:"lastDeliveryAt,omitempty"`
	PausedAt       *time.Time     `json:"pausedAt,omitempty"`
	PauseReason    string         `json:"pauseReason,omitempty"`
	DisabledAt     *time.Time     `json:"disabledAt,omitempty"`
	HoldUntil      *time.Time     `json:"holdUntil,omitempty"`
	RemovedAt      *time.Time     `json:"removedAt,omitempty"`
	CreatedAt      time.Time      `json:"createdAt"`
	// InFlightCap is the MaxInFlight of the endpoint's policy, kept beside it by the
	// engine so that a store can claim in one statement.
	InFlightCap int `json:"-"`
}

// Wants reports whether the endpoint's filter takes events of type t.
func (e Endpoint) Wants(t string) bool {
	if len(e.Events) == 0 {
		return true
	}
	for _, x := range e.Events {
		if x == "*" || x == t {
			return true
		}
	}
	return false
}

// DeliveryStatus is the state of a delivery.
type DeliveryStatus string

// Delivery states.
const (
	DeliveryPending   DeliveryStatus = "PENDING"
	DeliverySucceeded DeliveryStatus = "SUCCEEDED"
	DeliveryFailed    DeliveryStatus = "FAILED"
	DeliveryDead      DeliveryStatus = "DEAD"
	DeliveryDropped   DeliveryStatus = "DROPPED"
)

// Finished reports whether no further attempt is planned.
func (s DeliveryStatus) Finished() bool { return s != DeliveryPending }

// Delivery is one event to one endpoint, tried on its own.
type Delivery struct {
	ID         string         `json:"id"`
	Account    string         `json:"account"`
	EventID    string         `json:"eventId"`
	EventType  string         `json:"eventType"`
	EndpointID string         `json:"endpointId"`
	Status     DeliveryStatus `json:"status"`
	// Attempts counts the attempts recorded (numbered 1..Attempts).
	Attempts int `json:"attempts"`
	// RunStart is the value of Attempts when the current run began (0, or the count at
	// the last manual retry); the policy's attempt budget applies to Attempts-RunStart.
	RunStart      int        `json:"-"`
	NextAttemptAt time.Time  `json:"nextAttemptAt"`
	LeaseUntil    *time.Time `json:"leaseUntil,omitempty"`
	// FaultSince is when faults on our side began rescheduling this delivery.
	FaultSince *time.Time `json:"faultSince,omitempty"`
	LastError  string     `json:"lastError,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
}

// Attempt is the record of one try of a delivery.
type Attempt struct {
	DeliveryID string `json:"deliveryId"`
	// Number is 1 for the first try; 0 marks the record written for an event that
	// arrived while the endpoint was paused.
	Number   int           `json:"number"`
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration"`
	// ScheduledAt is when the attempt was due; At minus ScheduledAt is its lateness.
	ScheduledAt time.Time `json:"scheduledAt"`
	// Status is the HTTP status, 0 when nothing answered.
	Status int    `json:"status"`
	Class  Class  `json:"class"`
	Error  string `json:"error,omitempty"`
	// Response is the stored response body: at most 64 KiB, and a body that is not
	// JSON is cut to its first 1,000 characters.
	Response string `json:"response,omitempty"`
}

// Class is the outcome class of one delivery attempt as the outbox stores and
// reports it (docs/outbox.md §2 step 4). It is a type apart from retry.Class, the
// failure classes of call control's `rp`: the outbox names HTTP answers otherwise
// (http_4xx, not 4xx), folds every connection failure into network and every
// expired deadline into timeout, and has outcomes of its own (endpoint_paused,
// lease_expired). The strings are stored and on the wire: they never change.
type Class string

// Outcome classes of an attempt.
const (
	ClassSuccess   Class = "success"
	ClassGone      Class = "gone"      // 410
	ClassThrottled Class = "throttled" // 429
	ClassHTTP4xx   Class = "http_4xx"  // another 4xx
	ClassHTTP5xx   Class = "http_5xx"  // 5xx, 503 with Retry-After included
	ClassRedirect  Class = "redirect"  // 3xx, never followed
	// ClassTimeout: no answer within the profile's timeout (connect and response).
	ClassTimeout Class = "timeout"
	// ClassNetwork: refused, reset, TLS, DNS, a URL that cannot be requested, or an
	// answer that is not HTTP.
	ClassNetwork       Class = "network"
	ClassEgressRefused Class = "egress_refused"
	// ClassInternal: a fault on our side (the attempt is not counted).
	ClassInternal Class = "internal"
	// ClassEndpointPaused marks attempt 0, written for an event that arrived while its
	// endpoint was paused under a profile that logs such events as failed.
	ClassEndpointPaused Class = "endpoint_paused"
	// ClassLeaseExpired marks an attempt whose outcome is unknown because the process
	// holding its lease stopped; the reaper writes it.
	ClassLeaseExpired Class = "lease_expired"
)

// AuditEntry records a change to an endpoint that an operator must be able to find
// later: creations, removals, pauses, disables, resumes, secret rotations, manual
// retries and recovers.
type AuditEntry struct {
	ID         int64  `json:"id"`
	Account    string `json:"account"`
	EndpointID string `json:"endpointId"`
	// DeliveryID names the delivery of a manual retry; empty otherwise.
	DeliveryID string `json:"deliveryId,omitempty"`
	Action     string `json:"action"`
	// Actor is who made the change: ActorSystem for the outbox's own decisions (a
	// 410, the failure threshold), otherwise what the operator's caller named, such as
	// the id of the API token it used.
	Actor string `json:"actor"`
	// Reason is the pause reason of an automatic change (HTTP_410, NETWORK_ERROR...),
	// or what the operator gave (MANUAL for a pause when nothing was given).
	Reason string `json:"reason,omitempty"`
	// Count is how many deliveries a recover queued again; 0 otherwise.
	Count int       `json:"count,omitempty"`
	At    time.Time `json:"at"`
}

// ActorSystem is the actor of the outbox's own changes.
const ActorSystem = "system"

// Audit actions.
const (
	AuditRemoved  = "endpoint.removed"
	AuditPaused   = "endpoint.paused"
	AuditDisabled = "endpoint.disabled"
	AuditResumed  = "endpoint.resumed"
	AuditRotated  = "endpoint.secret_rotated"
	AuditCreated  = "endpoint.created"
	// AuditRetried: a finished delivery sent again by hand (Retry).
	AuditRetried = "delivery.retried"
	// AuditRecovered: an endpoint's FAILED deliveries sent again in bulk (Recover).
	AuditRecovered = "endpoint.recovered"
)
