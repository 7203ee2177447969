package outboxapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls the API (of a node, or of Handler) with an account's API token. It
// decodes the answers into the types the server encodes them from, so a program
// and the server cannot disagree on a field.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// ErrBadBaseURL is returned by NewClient for a base URL that is not http(s)://host.
var ErrBadBaseURL = errors.New("outboxapi: the base URL must be http(s)://host[:port]")

// NewClient returns a client of the API at baseURL (http(s)://host:port, with a path
// prefix if the API is mounted under one) that authenticates with token. hc nil is a
// client that gives up on a request after 30 s.
func NewClient(baseURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadBaseURL, baseURL)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: u, token: token, http: hc}, nil
}

// Call is one request of the API whose success answer decodes into T. The functions
// below build one per operation; Send makes it. Body is what is sent as JSON (nil:
// no body): a program may replace it with a value that marshals to the same shape,
// e.g. a policy document passed through as its user wrote it, for the server to
// validate.
type Call[T any] struct {
	Method string
	Path   string
	Query  url.Values
	Body   any
	// Header holds headers of the request's own (Idempotency-Key); nil for none.
	Header http.Header
}

// NoContent is the answer of an operation that answers 204 with no body.
type NoContent = struct{}

// ProblemError is an answer that is not a success: its status and its RFC 9457
// problem document.
type ProblemError struct {
	Status int
	// Problem is the problem document as received; nil when the answer was not one
	// (a proxy's error page, say).
	Problem json.RawMessage
	// Title and Detail are the document's; Errors the fields it names as rejected.
	Title, Detail string
	Errors        []ProblemDetail
	body          string // the answer, when it was not a problem document
}

// ProblemDetail is one rejected field of a problem document.
type ProblemDetail struct {
	Location string `json:"location"`
	Message  string `json:"message"`
}

// Error is one line: the status, the detail (else the title) and each field
// rejected with why.
func (e *ProblemError) Error() string {
	if e.Problem == nil {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.body)
	}
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	var parts []string
	for _, d := range e.Errors {
		parts = append(parts, strings.TrimSpace(d.Location+": "+d.Message))
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, "; ") + ")"
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, msg)
}

// newProblemError reads an answer that is not a success.
func newProblemError(status int, raw []byte) *ProblemError {
	var doc struct {
		Title  string          `json:"title"`
		Detail string          `json:"detail"`
		Errors []ProblemDetail `json:"errors"`
	}
	if !json.Valid(raw) || json.Unmarshal(raw, &doc) != nil {
		return &ProblemError{Status: status, body: strings.TrimSpace(string(raw))}
	}
	return &ProblemError{Status: status, Problem: raw, Title: doc.Title, Detail: doc.Detail, Errors: doc.Errors}
}

// maxAnswer bounds the answer read: a page of the largest limit with stored responses.
const maxAnswer = 16 << 20

// Send makes call with c and decodes its success answer into a T, returned with the
// answer's body as received (for a program that shows the API's own JSON). Any other
// answer is a *ProblemError; a request that got no answer is an error naming it.
func Send[T any](ctx context.Context, c *Client, call Call[T]) (T, json.RawMessage, error) {
	var out T
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + call.Path
	u.RawQuery = call.Query.Encode()
	var body io.Reader
	if call.Body != nil {
		raw, err := json.Marshal(call.Body)
		if err != nil {
			return out, nil, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, call.Method, u.String(), body)
	if err != nil {
		return out, nil, err
	}
	for k, vs := range call.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if call.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return out, nil, fmt.Errorf("%s %s: %w", call.Method, u.Redacted(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return out, nil, fmt.Errorf("%s %s: reading the answer: %w", call.Method, u.Redacted(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, nil, newProblemError(resp.StatusCode, raw)
	}
	if len(raw) == 0 {
		return out, nil, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, raw, fmt.Errorf("%s %s: the answer is not the API's JSON: %w", call.Method, u.Redacted(), err)
	}
	return out, raw, nil
}

// Page selects a page of a list: Limit 0 is the API's default (50), Cursor "" the
// first page (else the previous page's NextCursor).
type Page struct {
	Limit  int
	Cursor string
}

func (p Page) query() url.Values {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// withReason is q with the audit log's reason, when there is one.
func withReason(q url.Values, reason string) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if reason != "" {
		q.Set("reason", reason)
	}
	return q
}

func webhookPath(id string, rest ...string) string {
	p := "/api/v1/webhooks/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

// ListWebhooks lists the account's endpoints with their health, oldest first.
func ListWebhooks(p Page) Call[WebhookList] {
	return Call[WebhookList]{Method: http.MethodGet, Path: "/api/v1/webhooks", Query: p.query()}
}

// CreateWebhook creates an endpoint; the answer holds its secret, shown this once.
func CreateWebhook(req CreateWebhookRequest) Call[WebhookEndpointWithSecret] {
	return Call[WebhookEndpointWithSecret]{Method: http.MethodPost, Path: "/api/v1/webhooks", Body: req}
}

// GetWebhook reads an endpoint.
func GetWebhook(id string) Call[WebhookEndpoint] {
	return Call[WebhookEndpoint]{Method: http.MethodGet, Path: webhookPath(id)}
}

// UpdateWebhook changes the fields of an endpoint that req gives.
func UpdateWebhook(id string, req UpdateWebhookRequest) Call[WebhookEndpoint] {
	return Call[WebhookEndpoint]{Method: http.MethodPatch, Path: webhookPath(id), Body: req}
}

// DeleteWebhook removes an endpoint, for reason (the audit log's; "" for none).
func DeleteWebhook(id, reason string) Call[NoContent] {
	return Call[NoContent]{Method: http.MethodDelete, Path: webhookPath(id), Query: withReason(nil, reason)}
}

// PingWebhook sends a settings.webhook.ping event to an endpoint.
func PingWebhook(id string) Call[WebhookDelivery] {
	return Call[WebhookDelivery]{Method: http.MethodPost, Path: webhookPath(id, "ping")}
}

// PauseWebhook pauses an endpoint (reason MANUAL).
func PauseWebhook(id, reason string) Call[WebhookEndpoint] {
	return Call[WebhookEndpoint]{Method: http.MethodPost, Path: webhookPath(id, "pause"), Query: withReason(nil, reason)}
}

// ResumeWebhook resumes a paused endpoint; its held deliveries are released.
func ResumeWebhook(id, reason string) Call[WebhookEndpoint] {
	return Call[WebhookEndpoint]{Method: http.MethodPost, Path: webhookPath(id, "resume"), Query: withReason(nil, reason)}
}

// RotateWebhookSecret gives an endpoint a new secret, shown this once; the old one
// keeps signing for grace (0: the API's default, 24 h), in whole seconds.
func RotateWebhookSecret(id string, grace time.Duration, reason string) Call[WebhookEndpointWithSecret] {
	return RotateWebhookSecretTo(id, grace, reason, "")
}

// RotateWebhookSecretTo is RotateWebhookSecret to key (a whsec_ secret or a whsk_
// signing key; "" for one the node makes).
func RotateWebhookSecretTo(id string, grace time.Duration, reason, key string) Call[WebhookEndpointWithSecret] {
	q := withReason(nil, reason)
	if grace > 0 {
		q.Set("graceSeconds", strconv.Itoa(int(grace.Seconds())))
	}
	call := Call[WebhookEndpointWithSecret]{Method: http.MethodPost, Path: webhookPath(id, "rotate-secret"), Query: q}
	if key != "" {
		call.Body = RotateSecretRequest{Secret: key}
	}
	return call
}

// DeliveryFilter selects deliveries of an endpoint's log; empty fields select all.
type DeliveryFilter struct {
	Page
	Status, Type, EventID string
}

// ListDeliveries lists an endpoint's deliveries, newest first.
func ListDeliveries(id string, f DeliveryFilter) Call[DeliveryList] {
	q := f.query()
	for k, v := range map[string]string{"status": f.Status, "type": f.Type, "eventId": f.EventID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return Call[DeliveryList]{Method: http.MethodGet, Path: webhookPath(id, "deliveries"), Query: q}
}

// GetDelivery reads one delivery of an endpoint with every attempt.
func GetDelivery(id, deliveryID string) Call[WebhookDeliveryDetail] {
	return Call[WebhookDeliveryDetail]{Method: http.MethodGet, Path: webhookPath(id, "deliveries", deliveryID)}
}

// RetryDelivery sends a finished delivery again.
func RetryDelivery(id, deliveryID, reason string) Call[WebhookDelivery] {
	return Call[WebhookDelivery]{Method: http.MethodPost, Path: webhookPath(id, "deliveries", deliveryID, "retry"),
		Query: withReason(nil, reason)}
}

// RecoverWebhook sends again every FAILED delivery of an endpoint created since a
// time (zero: every one kept).
func RecoverWebhook(id string, since time.Time, reason string) Call[Recovered] {
	q := withReason(nil, reason)
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339))
	}
	return Call[Recovered]{Method: http.MethodPost, Path: webhookPath(id, "recover"), Query: q}
}

// PublishEvent publishes an event to every endpoint that takes its type (or to
// req.EndpointID alone); WithIdempotencyKey gives it a key.
func PublishEvent(req PublishRequest) Call[Published] {
	return Call[Published]{Method: http.MethodPost, Path: "/api/v1/events", Body: req}
}

// WithIdempotencyKey is call sent with the Idempotency-Key key (docs/outbox.md §4);
// "" sends none.
func (c Call[T]) WithIdempotencyKey(key string) Call[T] {
	if key != "" {
		c.Header = c.Header.Clone()
		if c.Header == nil {
			c.Header = http.Header{}
		}
		c.Header.Set("Idempotency-Key", key)
	}
	return c
}

// GetEvent reads one event, with its deliveries and the endpoints whose filter
// excluded it.
func GetEvent(id string) Call[WebhookEventDetail] {
	return Call[WebhookEventDetail]{Method: http.MethodGet, Path: "/api/v1/events/" + url.PathEscape(id)}
}

// CreateEventType adds a type to the account's catalog.
func CreateEventType(req CreateEventTypeRequest) Call[WebhookEventType] {
	return Call[WebhookEventType]{Method: http.MethodPost, Path: "/api/v1/event-types", Body: req}
}

// ListEventTypes lists the account's catalog by name, archived types too when asked.
func ListEventTypes(p Page, includeArchived bool) Call[EventTypeList] {
	q := p.query()
	if includeArchived {
		q.Set("includeArchived", "true")
	}
	return Call[EventTypeList]{Method: http.MethodGet, Path: "/api/v1/event-types", Query: q}
}

// GetEventType reads one event type.
func GetEventType(name string) Call[WebhookEventType] {
	return Call[WebhookEventType]{Method: http.MethodGet, Path: "/api/v1/event-types/" + url.PathEscape(name)}
}

// UpdateEventType changes the fields of an event type that req gives.
func UpdateEventType(name string, req UpdateEventTypeRequest) Call[WebhookEventType] {
	return Call[WebhookEventType]{Method: http.MethodPatch, Path: "/api/v1/event-types/" + url.PathEscape(name), Body: req}
}

// ArchiveEventType archives an event type.
func ArchiveEventType(name string) Call[WebhookEventType] {
	return Call[WebhookEventType]{Method: http.MethodDelete, Path: "/api/v1/event-types/" + url.PathEscape(name)}
}

// GetCatalog reads the account's catalog settings.
func GetCatalog() Call[WebhookCatalog] {
	return Call[WebhookCatalog]{Method: http.MethodGet, Path: "/api/v1/event-catalog"}
}

// SetCatalog replaces the account's catalog settings.
func SetCatalog(c WebhookCatalog) Call[WebhookCatalog] {
	return Call[WebhookCatalog]{Method: http.MethodPut, Path: "/api/v1/event-catalog", Body: c}
}

// EventFilter selects events; empty fields select all.
type EventFilter struct {
	Page
	Since time.Time
	Type  string
}

// ListEvents lists the account's events, oldest first.
func ListEvents(f EventFilter) Call[EventList] {
	q := f.query()
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339))
	}
	if f.Type != "" {
		q.Set("type", f.Type)
	}
	return Call[EventList]{Method: http.MethodGet, Path: "/api/v1/events", Query: q}
}

// ListAudit lists the account's audit log, newest first; endpointID "" lists every
// endpoint's.
func ListAudit(endpointID string, p Page) Call[AuditList] {
	q := p.query()
	if endpointID != "" {
		q.Set("endpointId", endpointID)
	}
	return Call[AuditList]{Method: http.MethodGet, Path: "/api/v1/audit", Query: q}
}
