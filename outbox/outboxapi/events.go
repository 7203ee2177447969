package outboxapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

type publishInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"The same key with the same body within 24 h answers the event the first publish stored (200, duplicate); with another body, 409. Per account"`
	Body           PublishRequest
}

type publishOutput struct {
	Status int
	Body   Published
}

// maxEventDeliveries bounds the deliveries an event's view lists: an event has one
// per endpoint of its account that took it.
const maxEventDeliveries = 500

type eventPath struct {
	ID string `path:"id" maxLength:"128"`
}

type listEventsInput struct {
	Since  time.Time `query:"since" doc:"Only events created at or after this time (RFC 3339)"`
	Type   string    `query:"type" maxLength:"128"`
	Cursor string    `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
	Limit  int       `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type eventOutput struct{ Body WebhookEventDetail }

type eventListOutput struct{ Body EventList }

type listAuditInput struct {
	EndpointID string `query:"endpointId" maxLength:"128" doc:"Only this endpoint's entries"`
	Cursor     string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
	Limit      int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type auditListOutput struct{ Body AuditList }

func (s *server) registerEvents() {
	huma.Register(s.api, s.operation("publish-event", http.MethodPost, "/api/v1/events",
		"Publish an event to every endpoint that takes its type (or to endpointId); answers it with its deliveries", http.StatusCreated),
		func(ctx context.Context, in *publishInput) (*publishOutput, error) {
			ev := outbox.Event{ID: in.Body.ID, Account: principal(ctx).Account, Type: in.Body.Type, Data: in.Body.Data,
				Channels: in.Body.Channels}
			if in.Body.CreatedAt != nil {
				ev.CreatedAt = *in.Body.CreatedAt
			}
			pub, err := s.ob.PublishWith(ctx, ev, outbox.PublishOptions{EndpointID: in.Body.EndpointID, IdempotencyKey: in.IdempotencyKey})
			if err != nil {
				return nil, s.problem(err, "event")
			}
			out := &publishOutput{Status: http.StatusCreated}
			if pub.Duplicate {
				out.Status = http.StatusOK
			}
			out.Body.Event, out.Body.Duplicate = eventJSON(pub.Event), pub.Duplicate
			out.Body.Deliveries = make([]WebhookDelivery, 0, len(pub.Deliveries))
			for _, d := range pub.Deliveries {
				out.Body.Deliveries = append(out.Body.Deliveries, deliveryJSON(d))
			}
			return out, nil
		})

	huma.Register(s.api, s.operation("get-event", http.MethodGet, "/api/v1/events/{id}",
		"Read one event, with its deliveries and the endpoints whose filter excluded it", http.StatusOK),
		func(ctx context.Context, in *eventPath) (*eventOutput, error) {
			account := principal(ctx).Account
			ev, err := s.ob.GetEvent(ctx, account, in.ID)
			if err != nil {
				return nil, s.problem(err, "event")
			}
			ds, err := s.ob.ListDeliveries(ctx, outbox.DeliveryQuery{Account: account, EventID: ev.ID, Limit: maxEventDeliveries})
			if err != nil {
				return nil, s.problem(err, "event")
			}
			out := WebhookEventDetail{WebhookEvent: eventJSON(ev), Deliveries: make([]WebhookDelivery, 0, len(ds)),
				Excluded: make([]WebhookExclusion, 0, len(ev.Excluded))}
			for i := len(ds) - 1; i >= 0; i-- { // listed newest first
				out.Deliveries = append(out.Deliveries, deliveryJSON(ds[i]))
			}
			for _, x := range ev.Excluded {
				out.Excluded = append(out.Excluded, WebhookExclusion{EndpointID: x.EndpointID, Reason: x.Reason})
			}
			return &eventOutput{Body: out}, nil
		})

	huma.Register(s.api, s.operation("list-events", http.MethodGet, "/api/v1/events", "The account's events, oldest first", http.StatusOK),
		func(ctx context.Context, in *listEventsInput) (*eventListOutput, error) {
			after, err := cursorKey(cursorEvents, in.Cursor)
			if err != nil {
				return nil, err
			}
			evs, err := s.ob.ListEvents(ctx, outbox.EventQuery{Account: principal(ctx).Account, Since: in.Since, Type: in.Type,
				AfterID: after, Limit: in.Limit})
			if err != nil {
				return nil, s.problem(err, "query")
			}
			out := &eventListOutput{}
			out.Body.Data, out.Body.NextCursor = keysetPage(cursorEvents, evs, in.Limit, eventJSON,
				func(ev outbox.Event) string { return ev.ID })
			return out, nil
		})
}

func (s *server) registerAudit() {
	huma.Register(s.api, s.operation("list-audit", http.MethodGet, "/api/v1/audit",
		"The account's audit log, newest first: creations, removals, pauses, disables, resumes, secret rotations, retries and recovers", http.StatusOK),
		func(ctx context.Context, in *listAuditInput) (*auditListOutput, error) {
			before, err := auditCursorID(in.Cursor)
			if err != nil {
				return nil, err
			}
			es, err := s.ob.ListAudit(ctx, outbox.AuditQuery{Account: principal(ctx).Account, EndpointID: in.EndpointID, BeforeID: before, Limit: in.Limit})
			if err != nil {
				return nil, s.problem(err, "query")
			}
			out := &auditListOutput{}
			out.Body.Data, out.Body.NextCursor = keysetPage(cursorAudit, es, in.Limit, auditJSON,
				func(e outbox.AuditEntry) string { return formatAuditID(e.ID) })
			return out, nil
		})
}
