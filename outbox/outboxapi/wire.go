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
	Policy         outbox.Overrides `json:"policy" doc:"Overrides of the profile's values (docs/outbox.md §3), e.g. {\"scheduleSeconds\": [1, 1], \"allowHttp\": true}"`
	Status         string           `json:"status" enum:"ACTIVE,PAUSED,DISABLED"`
	Failures       int              `json:"failures" doc:"Failed attempts in a row across its deliveries; a success resets it"`
	LastDeliveryAt *time.Time       `json:"lastDeliveryAt" doc:"When a delivery last got through"`
	PausedAt       *time.Time       `json:"pausedAt"`
	PauseReason    *string          `json:"pauseReason" doc:"The last answer before the pause: HTTP_410, HTTP_429, HTTP_4xx, HTTP_5xx, HTTP_3xx, NETWORK_ERROR, TIMEOUT, or MANUAL"`
	DisabledAt     *time.Time       `json:"disabledAt"`
	HoldUntil      *time.Time       `json:"holdUntil" doc:"Deliveries wait until then (a 429's Retry-After)"`
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
	}

	// UpdateWebhookRequest is the body of PATCH /api/v1/webhooks/{id}: the fields
	// given change, the others stay.
	UpdateWebhookRequest = struct {
		URL        *string           `json:"url,omitempty" minLength:"1" maxLength:"2048"`
		Events     *[]string         `json:"events,omitempty" maxItems:"100"`
		APIVersion *string           `json:"apiVersion,omitempty" maxLength:"64"`
		Profile    *string           `json:"profile,omitempty" enum:"sajn,digize,lucibook,standard"`
		Policy     *outbox.Overrides `json:"policy,omitempty" doc:"Replaces the overrides as a whole"`
	}

	// PublishRequest is the body of POST /api/v1/events.
	PublishRequest = struct {
		ID         string          `json:"id,omitempty" maxLength:"128" pattern:"^[A-Za-z0-9_:-]+$" doc:"Idempotency key: publishing it again with the same content answers the stored event; default generated"`
		Type       string          `json:"type" minLength:"1" maxLength:"128" doc:"e.g. invoice.paid; endpoints filter on it"`
		Data       json.RawMessage `json:"data" doc:"The event's JSON payload, at most 256 KiB"`
		CreatedAt  *time.Time      `json:"createdAt,omitempty" doc:"Default now"`
		EndpointID string          `json:"endpointId,omitempty" maxLength:"128" doc:"Deliver to this endpoint only, whatever events it takes"`
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
	}
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
	return WebhookEvent{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC(), Data: ev.Data}
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
