package outboxapi

import (
	"encoding/json"
	"math"
	"time"

	"github.com/switchboard-voice/switchboard/outbox"
)

// The JSON shapes of the API (docs/outbox.md §4): the model's fields in camelCase,
// times RFC 3339 in UTC, null where a time or reason does not apply.

// WebhookEndpoint is an endpoint with its health.
type WebhookEndpoint struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	Events     []string `json:"events" doc:"Event types it takes; [\"*\"] takes every type"`
	APIVersion string   `json:"apiVersion"`
	Profile    string   `json:"profile" enum:"sajn,digize,lucibook,standard"`
	// Policy is the endpoint's overrides of its profile's values.
	Policy         outbox.Overrides  `json:"policy" doc:"Overrides of the profile's values (docs/outbox.md §3), e.g. {\"scheduleSeconds\": [1, 1], \"allowHttp\": true}"`
	Status         string            `json:"status" enum:"ACTIVE,PAUSED,DISABLED"`
	Failures       int               `json:"failures" doc:"Failed attempts in a row across its deliveries; a success resets it"`
	LastDeliveryAt *time.Time        `json:"lastDeliveryAt" doc:"When a delivery last got through"`
	PausedAt       *time.Time        `json:"pausedAt"`
	PauseReason    *string           `json:"pauseReason" doc:"The last answer before the pause: HTTP_410, HTTP_429, HTTP_4xx, HTTP_5xx, HTTP_3xx, NETWORK_ERROR, TIMEOUT, or MANUAL"`
	DisabledAt     *time.Time        `json:"disabledAt"`
	HoldUntil      *time.Time        `json:"holdUntil" doc:"Deliveries wait until then (a 429's Retry-After)"`
	Headers        map[string]string `json:"headers" doc:"Sent on every attempt; values that look like credentials are shown masked"`
	Channels       []string          `json:"channels" doc:"The channels it takes events of; [] takes the events without channels"`
	Filter         json.RawMessage   `json:"filter" doc:"The JSON condition on an event's data that decides whether it gets it (docs/outbox.md §1); null: every event"`
	RateLimit      *int              `json:"rateLimit" doc:"Deliveries started per second at most, across every node; null: none"`
}

// WebhookEndpointWithSecret is an endpoint as its creation or a rotation answers it.
type WebhookEndpointWithSecret struct {
	WebhookEndpoint
	Secret string `json:"secret" doc:"What the receiver verifies signatures with (whsec_ secret, or whpk_ public key): shown this once"`
}

// WebhookDelivery is one event to one endpoint, as listed.
type WebhookDelivery struct {
	ID            string     `json:"id"`
	EventID       string     `json:"eventId"`
	EndpointID    string     `json:"endpointId"`
	Type          string     `json:"type"`
	Status        string     `json:"status" enum:"PENDING,SUCCEEDED,FAILED,DEAD,DROPPED"`
	Attempts      int        `json:"attempts" doc:"Attempts made"`
	NextAttemptAt *time.Time `json:"nextAttemptAt" doc:"When the next attempt is due; null once the delivery is finished"`
	CreatedAt     time.Time  `json:"createdAt"`
}

// WebhookDeliveryDetail is one delivery read alone, with its attempts, oldest first.
type WebhookDeliveryDetail struct {
	ID            string           `json:"id"`
	EventID       string           `json:"eventId"`
	EndpointID    string           `json:"endpointId"`
	Type          string           `json:"type"`
	Status        string           `json:"status" enum:"PENDING,SUCCEEDED,FAILED,DEAD,DROPPED"`
	Attempts      []WebhookAttempt `json:"attempts"`
	NextAttemptAt *time.Time       `json:"nextAttemptAt"`
	CreatedAt     time.Time        `json:"createdAt"`
}

// WebhookAttempt is the record of one attempt.
type WebhookAttempt struct {
	Number       int       `json:"number" doc:"From 1; 0 is the record of an event that arrived while its endpoint was paused"`
	At           time.Time `json:"at"`
	DurationMs   float64   `json:"durationMs"`
	Status       int       `json:"status" doc:"HTTP status; 0 when nothing answered"`
	Outcome      string    `json:"outcome" doc:"success, gone, throttled, http_4xx, http_5xx, redirect, timeout, network, egress_refused, endpoint_paused, lease_expired"`
	Error        *string   `json:"error"`
	ResponseBody *string   `json:"responseBody" doc:"The stored response: at most 64 KiB; a body that is not JSON cut to 1,000 characters"`
}

// WebhookEvent is a published event.
type WebhookEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
	Channels  []string        `json:"channels" doc:"The channels it was published to; [] for none"`
}

// WebhookEventDetail is one event read alone: where it went, and the endpoints whose
// filter kept it from them.
type WebhookEventDetail struct {
	WebhookEvent
	Deliveries []WebhookDelivery  `json:"deliveries" doc:"Its deliveries, oldest first"`
	Excluded   []WebhookExclusion `json:"excluded" doc:"Endpoints that take its type and channels but whose filter did not match: no delivery was created for them"`
}

// WebhookExclusion is an endpoint an event was not delivered to, and why.
type WebhookExclusion struct {
	EndpointID string `json:"endpointId"`
	Reason     string `json:"reason" enum:"filter"`
}

// WebhookEventType is an entry of the account's event-type catalog.
type WebhookEventType struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	JSONSchema  json.RawMessage `json:"schema" doc:"The JSON Schema every published event's data of this type passes; null: none"`
	Archived    bool            `json:"archived" doc:"Archived types are kept for the events of them; a strict catalog no longer lets endpoints subscribe to them"`
	ArchivedAt  *time.Time      `json:"archivedAt"`
	CreatedAt   time.Time       `json:"createdAt"`
	UpdatedAt   time.Time       `json:"updatedAt"`
}

// WebhookCatalog is the account's settings of its event-type catalog.
type WebhookCatalog struct {
	Strict bool `json:"strict" doc:"Endpoints may subscribe only to the catalog's types that are not archived (or to every type, *)"`
}

// The bodies of requests, of lists and of the answers without a type of their own.
// Each is an alias of an unnamed struct, not a defined type: huma names the schema of
// an unnamed body after its operation (CreateWebhookInputBody, WebhookListOutputBody,
// ...), so the OpenAPI document keeps the names it had before the client shared
// these types with the server.
type (
	// CreateWebhookRequest is the body of POST /api/v1/webhooks.
	CreateWebhookRequest = struct {
		URL        string            `json:"url" minLength:"1" maxLength:"2048" doc:"Absolute https URL (http when the policy allows it), without user-info"`
		Events     []string          `json:"events,omitempty" maxItems:"100" doc:"Event types it takes; empty or [\"*\"] takes every type"`
		APIVersion string            `json:"apiVersion,omitempty" maxLength:"64" doc:"Rendered into every attempt's body"`
		Profile    string            `json:"profile,omitempty" enum:"sajn,digize,lucibook,standard" doc:"Default standard"`
		Policy     *outbox.Overrides `json:"policy,omitempty" doc:"Overrides of the profile's values"`
		Secret     string            `json:"secret,omitempty" maxLength:"256" doc:"The signing key: a whsec_ secret (Standard Webhooks v1, HMAC-SHA256) or a whsk_ ed25519 signing key (v1a; the answer's secret is then its whpk_ public key); default a new whsec_ secret"`
		Headers    map[string]string `json:"headers,omitempty" maxProperties:"32" doc:"Headers sent on every attempt, e.g. {\"Authorization\": \"Bearer ...\"}; not Host, Content-Type, Content-Length, Transfer-Encoding, Connection or a webhook-* header"`
		Channels   []string          `json:"channels,omitempty" maxItems:"100" doc:"The only channels it takes events of (an event with channels reaches the endpoints sharing one; one without, the endpoints without channels)"`
		Filter     json.RawMessage   `json:"filter,omitempty" doc:"A JSON condition on an event's data (docs/outbox.md §1), e.g. {\"amount\": {\"$gte\": 100}, \"currency\": {\"$in\": [\"EUR\", \"USD\"]}}"`
		RateLimit  int               `json:"rateLimit,omitempty" minimum:"0" maximum:"10000" doc:"Deliveries started per second at most, across every node; 0: none"`
	}

	// UpdateWebhookRequest is the body of PATCH /api/v1/webhooks/{id}: the fields
	// given change, the others stay.
	UpdateWebhookRequest = struct {
		URL        *string            `json:"url,omitempty" minLength:"1" maxLength:"2048"`
		Events     *[]string          `json:"events,omitempty" maxItems:"100"`
		APIVersion *string            `json:"apiVersion,omitempty" maxLength:"64"`
		Profile    *string            `json:"profile,omitempty" enum:"sajn,digize,lucibook,standard"`
		Policy     *outbox.Overrides  `json:"policy,omitempty" doc:"Replaces the overrides as a whole"`
		Headers    map[string]*string `json:"headers,omitempty" maxProperties:"64" doc:"Sets each header given; one given null is removed; the others keep their value"`
		Channels   *[]string          `json:"channels,omitempty" maxItems:"100" doc:"Replaces the channels; [] for none"`
		Filter     json.RawMessage    `json:"filter,omitempty" doc:"Replaces the filter; null or {} removes it"`
		RateLimit  *int               `json:"rateLimit,omitempty" minimum:"0" maximum:"10000" doc:"Replaces the rate limit; 0 removes it"`
	}

	// RotateSecretRequest is the body, optional, of POST
	// /api/v1/webhooks/{id}/rotate-secret.
	RotateSecretRequest = struct {
		Secret string `json:"secret,omitempty" maxLength:"256" doc:"The new key: a whsec_ secret or a whsk_ ed25519 signing key; default a new key of the scheme the endpoint signs with"`
	}

	// CreateEventTypeRequest is the body of POST /api/v1/event-types.
	CreateEventTypeRequest = struct {
		Name        string          `json:"name" minLength:"1" maxLength:"128" doc:"The event type, as events carry it"`
		Description string          `json:"description,omitempty" maxLength:"2000"`
		JSONSchema  json.RawMessage `json:"schema,omitempty" doc:"A JSON Schema (draft 2020-12 unless its $schema names another) every published event's data of this type must pass; no reference outside it is loaded"`
	}

	// UpdateEventTypeRequest is the body of PATCH /api/v1/event-types/{name}.
	UpdateEventTypeRequest = struct {
		Description *string         `json:"description,omitempty" maxLength:"2000"`
		JSONSchema  json.RawMessage `json:"schema,omitempty" doc:"Replaces the schema; null removes it"`
		Archived    *bool           `json:"archived,omitempty" doc:"false restores an archived type"`
	}

	// EventTypeList is a page of the event-type catalog.
	EventTypeList = struct {
		Data       []WebhookEventType `json:"data"`
		NextCursor *string            `json:"nextCursor"`
	}

	// PublishRequest is the body of POST /api/v1/events.
	PublishRequest = struct {
		ID         string          `json:"id,omitempty" maxLength:"128" pattern:"^[A-Za-z0-9_:-]+$" doc:"Idempotency key: publishing it again with the same content answers the stored event; default generated"`
		Type       string          `json:"type" minLength:"1" maxLength:"128" doc:"e.g. invoice.paid; endpoints filter on it"`
		Data       json.RawMessage `json:"data" doc:"The event's JSON payload, at most 256 KiB"`
		CreatedAt  *time.Time      `json:"createdAt,omitempty" doc:"Default now"`
		EndpointID string          `json:"endpointId,omitempty" maxLength:"128" doc:"Deliver to this endpoint only, whatever events, channels and filter it has"`
		Channels   []string        `json:"channels,omitempty" maxItems:"10" doc:"Deliver to the endpoints that take one of these channels only"`
	}

	// Published answers a publish: the event and the deliveries it made.
	Published = struct {
		Event      WebhookEvent      `json:"event"`
		Deliveries []WebhookDelivery `json:"deliveries"`
		Duplicate  bool              `json:"duplicate" doc:"The id was published before: nothing more is sent"`
	}

	// WebhookList is a page of endpoints; NextCursor is nil on the last page.
	WebhookList = struct {
		Data       []WebhookEndpoint `json:"data"`
		NextCursor *string           `json:"nextCursor"`
	}

	// DeliveryList is a page of an endpoint's delivery log.
	DeliveryList = struct {
		Data       []WebhookDelivery `json:"data"`
		NextCursor *string           `json:"nextCursor"`
	}

	// EventList is a page of events.
	EventList = struct {
		Data       []WebhookEvent `json:"data"`
		NextCursor *string        `json:"nextCursor"`
	}

	// AuditList is a page of the audit log.
	AuditList = struct {
		Data       []WebhookAuditEntry `json:"data"`
		NextCursor *string             `json:"nextCursor"`
	}

	// Recovered answers a recover: the FAILED deliveries queued again.
	Recovered = struct {
		Recovered int `json:"recovered" doc:"FAILED deliveries queued again"`
	}
)

// WebhookAuditEntry is one entry of the audit log.
type WebhookAuditEntry struct {
	ID         string    `json:"id"`
	EndpointID string    `json:"endpointId"`
	DeliveryID *string   `json:"deliveryId" doc:"The delivery of a manual retry"`
	Action     string    `json:"action" doc:"endpoint.created, endpoint.removed, endpoint.paused, endpoint.disabled, endpoint.resumed, endpoint.secret_rotated, delivery.retried, endpoint.recovered"`
	Actor      string    `json:"actor" doc:"The id of the API token that asked, or system"`
	Reason     *string   `json:"reason"`
	Count      *int      `json:"count" doc:"Deliveries a recover sent again"`
	At         time.Time `json:"at"`
}

func endpointJSON(ep outbox.Endpoint) WebhookEndpoint {
	return WebhookEndpoint{
		ID: ep.ID, URL: ep.URL, Events: ep.Events, APIVersion: ep.APIVersion, Profile: profileOf(ep),
		Policy: ep.Overrides, Status: string(ep.Status), Failures: ep.Failures,
		LastDeliveryAt: utc(ep.LastDeliveryAt), PausedAt: utc(ep.PausedAt), PauseReason: text(ep.PauseReason),
		DisabledAt: utc(ep.DisabledAt), HoldUntil: utc(ep.HoldUntil),
		Headers: maskedHeaders(ep.Headers), Channels: orEmpty(ep.Channels), Filter: orNull(ep.Filter),
		RateLimit: positive(ep.RateLimit),
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

func eventTypeJSON(t outbox.EventType) WebhookEventType {
	return WebhookEventType{Name: t.Name, Description: t.Description, JSONSchema: orNull(t.Schema), Archived: t.ArchivedAt != nil,
		ArchivedAt: utc(t.ArchivedAt), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

func profileOf(ep outbox.Endpoint) string {
	if ep.Profile == "" {
		return outbox.ProfileStandard
	}
	return ep.Profile
}

func deliveryJSON(d outbox.Delivery) WebhookDelivery {
	return WebhookDelivery{ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Type: d.EventType, Status: string(d.Status),
		Attempts: d.Attempts, NextAttemptAt: nextAttempt(d), CreatedAt: d.CreatedAt.UTC()}
}

func deliveryDetailJSON(d outbox.Delivery, as []outbox.Attempt) WebhookDeliveryDetail {
	out := WebhookDeliveryDetail{ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Type: d.EventType, Status: string(d.Status),
		Attempts: make([]WebhookAttempt, 0, len(as)), NextAttemptAt: nextAttempt(d), CreatedAt: d.CreatedAt.UTC()}
	for _, a := range as {
		out.Attempts = append(out.Attempts, WebhookAttempt{Number: a.Number, At: a.At.UTC(),
			DurationMs: math.Round(float64(a.Duration.Microseconds())) / 1000, Status: a.Status, Outcome: string(a.Class),
			Error: text(a.Error), ResponseBody: text(a.Response)})
	}
	return out
}

func eventJSON(ev outbox.Event) WebhookEvent {
	return WebhookEvent{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC(), Data: ev.Data, Channels: orEmpty(ev.Channels)}
}

func auditJSON(e outbox.AuditEntry) WebhookAuditEntry {
	out := WebhookAuditEntry{ID: formatAuditID(e.ID), EndpointID: e.EndpointID, DeliveryID: text(e.DeliveryID), Action: e.Action,
		Actor: e.Actor, Reason: text(e.Reason), At: e.At.UTC()}
	if e.Action == outbox.AuditRecovered {
		n := e.Count
		out.Count = &n
	}
	return out
}

func nextAttempt(d outbox.Delivery) *time.Time {
	if d.Status != outbox.DeliveryPending {
		return nil
	}
	t := d.NextAttemptAt.UTC()
	return &t
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
