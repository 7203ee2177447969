package outbox

import (
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// The model: the rows a Store keeps, under the names a program uses. They are defined
// in package outboxdriver (the store seam), where their fields are documented.
type (
	// Event is something that happened, published once and delivered to every
	// matching endpoint of its account.
	Event = outboxdriver.Event
	// Endpoint is a subscriber URL with its filter, secrets, policy and health.
	Endpoint = outboxdriver.Endpoint
	// EndpointStatus is the state of an endpoint.
	EndpointStatus = outboxdriver.EndpointStatus
	// Secret is one signing key of an endpoint.
	Secret = outboxdriver.Secret
	// Delivery is one event to one endpoint, tried on its own.
	Delivery = outboxdriver.Delivery
	// DeliveryStatus is the state of a delivery.
	DeliveryStatus = outboxdriver.DeliveryStatus
	// Attempt is the record of one try of a delivery.
	Attempt = outboxdriver.Attempt
	// AuditEntry records a change to an endpoint that an operator must be able to find
	// later.
	AuditEntry = outboxdriver.AuditEntry
	// Published is the result of Publish: the stored event and its deliveries.
	Published = outboxdriver.Published
	// EventQuery selects events (ListEvents).
	EventQuery = outboxdriver.EventQuery
	// DeliveryQuery selects deliveries of an account (ListDeliveries).
	DeliveryQuery = outboxdriver.DeliveryQuery
	// AuditQuery selects audit entries of an account (ListAudit).
	AuditQuery = outboxdriver.ListAuditParams
	// Exclusion records that an endpoint's filter kept an event from it.
	Exclusion = outboxdriver.Exclusion
	// EventType is an entry of an account's event-type catalog.
	EventType = outboxdriver.EventType
	// Catalog is an account's settings of its event-type catalog.
	Catalog = outboxdriver.Catalog
	// EventTypeQuery selects event types of an account (ListEventTypes).
	EventTypeQuery = outboxdriver.ListEventTypesParams
)

// ExcludedByFilter is the reason of an Exclusion: the endpoint's filter did not
// match the event.
const ExcludedByFilter = outboxdriver.ExcludedByFilter

// Endpoint states.
const (
	EndpointActive   = outboxdriver.EndpointActive
	EndpointPaused   = outboxdriver.EndpointPaused
	EndpointDisabled = outboxdriver.EndpointDisabled
)

// Delivery states.
const (
	DeliveryPending   = outboxdriver.DeliveryPending
	DeliverySucceeded = outboxdriver.DeliverySucceeded
	DeliveryFailed    = outboxdriver.DeliveryFailed
	DeliveryDead      = outboxdriver.DeliveryDead
	DeliveryDropped   = outboxdriver.DeliveryDropped
)

// Pause reasons: the last answer before an endpoint was paused or disabled
// (Endpoint.PauseReason, Notice.Reason).
const (
	ReasonGone      = outboxdriver.ReasonGone
	ReasonThrottled = outboxdriver.ReasonThrottled
	Reason4xx       = outboxdriver.Reason4xx
	Reason5xx       = outboxdriver.Reason5xx
	ReasonRedirect  = outboxdriver.ReasonRedirect
	ReasonNetwork   = outboxdriver.ReasonNetwork
	ReasonTimeout   = outboxdriver.ReasonTimeout
	ReasonManual    = outboxdriver.ReasonManual
)

// AttemptClass is the outcome class of an attempt (Attempt.Class, docs/outbox.md §2
// step 4): the outbox's own, not the retry core's retry.Class.
type AttemptClass = outboxdriver.Class

// Outcome classes of an attempt.
const (
	ClassSuccess        = outboxdriver.ClassSuccess
	ClassGone           = outboxdriver.ClassGone
	ClassThrottled      = outboxdriver.ClassThrottled
	ClassHTTP4xx        = outboxdriver.ClassHTTP4xx
	ClassHTTP5xx        = outboxdriver.ClassHTTP5xx
	ClassRedirect       = outboxdriver.ClassRedirect
	ClassTimeout        = outboxdriver.ClassTimeout
	ClassNetwork        = outboxdriver.ClassNetwork
	ClassEgressRefused  = outboxdriver.ClassEgressRefused
	ClassInternal       = outboxdriver.ClassInternal
	ClassEndpointPaused = outboxdriver.ClassEndpointPaused
	ClassLeaseExpired   = outboxdriver.ClassLeaseExpired
)

// Audit actions (AuditEntry.Action, Notice.Action).
const (
	AuditRemoved  = outboxdriver.AuditRemoved
	AuditPaused   = outboxdriver.AuditPaused
	AuditDisabled = outboxdriver.AuditDisabled
	AuditResumed  = outboxdriver.AuditResumed
	AuditRotated  = outboxdriver.AuditRotated
	AuditCreated  = outboxdriver.AuditCreated
	AuditRetried  = outboxdriver.AuditRetried
	// AuditRecovered's entry counts the deliveries queued again (AuditEntry.Count).
	AuditRecovered = outboxdriver.AuditRecovered
)
