package outboxapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

type eventTypePath struct {
	Name string `path:"name" maxLength:"128" doc:"Event type, e.g. invoice.paid"`
}

type createEventTypeInput struct {
	Body CreateEventTypeRequest
}

type updateEventTypeInput struct {
	Name string `path:"name" maxLength:"128" doc:"Event type"`
	Body UpdateEventTypeRequest
}

type listEventTypesInput struct {
	IncludeArchived bool   `query:"includeArchived" doc:"List archived types too"`
	Cursor          string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
	Limit           int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type eventTypeOutput struct{ Body WebhookEventType }

type eventTypeListOutput struct{ Body EventTypeList }

type catalogInput struct {
	Body WebhookCatalog
}

type catalogOutput struct{ Body WebhookCatalog }

func (s *server) registerEventTypes() {
	huma.Register(s.api, s.operation("create-event-type", http.MethodPost, "/api/v1/event-types",
		"Add an event type to the account's catalog, with a JSON Schema its events' data must pass", http.StatusCreated),
		func(ctx context.Context, in *createEventTypeInput) (*eventTypeOutput, error) {
			t, err := s.ob.CreateEventType(ctx, outbox.EventTypeSpec{Account: principal(ctx).Account, Name: in.Body.Name,
				Description: in.Body.Description, Schema: in.Body.JSONSchema})
			if err != nil {
				return nil, s.problem(err, "event type")
			}
			return &eventTypeOutput{Body: eventTypeJSON(t)}, nil
		})

	huma.Register(s.api, s.operation("list-event-types", http.MethodGet, "/api/v1/event-types",
		"The account's event-type catalog, by name", http.StatusOK),
		func(ctx context.Context, in *listEventTypesInput) (*eventTypeListOutput, error) {
			after, err := cursorKey(cursorTypes, in.Cursor)
			if err != nil {
				return nil, err
			}
			ts, err := s.ob.ListEventTypes(ctx, outbox.EventTypeQuery{Account: principal(ctx).Account,
				IncludeArchived: in.IncludeArchived, AfterName: after, Limit: in.Limit})
			if err != nil {
				return nil, s.problem(err, "query")
			}
			out := &eventTypeListOutput{}
			out.Body.Data, out.Body.NextCursor = keysetPage(cursorTypes, ts, in.Limit, eventTypeJSON,
				func(t outbox.EventType) string { return t.Name })
			return out, nil
		})

	huma.Register(s.api, s.operation("get-event-type", http.MethodGet, "/api/v1/event-types/{name}",
		"Read one event type, archived or not", http.StatusOK),
		func(ctx context.Context, in *eventTypePath) (*eventTypeOutput, error) {
			t, err := s.ob.GetEventType(ctx, principal(ctx).Account, in.Name)
			if err != nil {
				return nil, s.problem(err, "event type")
			}
			return &eventTypeOutput{Body: eventTypeJSON(t)}, nil
		})

	huma.Register(s.api, s.operation("update-event-type", http.MethodPatch, "/api/v1/event-types/{name}",
		"Change an event type's description or schema, or restore it; the publishes after it use them", http.StatusOK),
		func(ctx context.Context, in *updateEventTypeInput) (*eventTypeOutput, error) {
			u := outbox.EventTypeUpdate{Description: in.Body.Description, Archived: in.Body.Archived}
			if len(in.Body.JSONSchema) > 0 {
				u.Schema = &in.Body.JSONSchema
			}
			t, err := s.ob.UpdateEventType(ctx, principal(ctx).Account, in.Name, u)
			if err != nil {
				return nil, s.problem(err, "event type")
			}
			return &eventTypeOutput{Body: eventTypeJSON(t)}, nil
		})

	huma.Register(s.api, s.operation("archive-event-type", http.MethodDelete, "/api/v1/event-types/{name}",
		"Archive an event type: kept for its events, no longer open to new subscriptions when the catalog is strict", http.StatusOK),
		func(ctx context.Context, in *eventTypePath) (*eventTypeOutput, error) {
			archived := true
			t, err := s.ob.UpdateEventType(ctx, principal(ctx).Account, in.Name, outbox.EventTypeUpdate{Archived: &archived})
			if err != nil {
				return nil, s.problem(err, "event type")
			}
			return &eventTypeOutput{Body: eventTypeJSON(t)}, nil
		})

	huma.Register(s.api, s.operation("get-event-catalog", http.MethodGet, "/api/v1/event-catalog",
		"The account's catalog settings", http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*catalogOutput, error) {
			c, err := s.ob.GetCatalog(ctx, principal(ctx).Account)
			if err != nil {
				return nil, s.problem(err, "catalog")
			}
			return &catalogOutput{Body: WebhookCatalog{Strict: c.Strict}}, nil
		})

	huma.Register(s.api, s.operation("set-event-catalog", http.MethodPut, "/api/v1/event-catalog",
		"Make the account's catalog strict (endpoints then subscribe only to its types) or not", http.StatusOK),
		func(ctx context.Context, in *catalogInput) (*catalogOutput, error) {
			c, err := s.ob.SetCatalog(ctx, outbox.Catalog{Account: principal(ctx).Account, Strict: in.Body.Strict})
			if err != nil {
				return nil, s.problem(err, "catalog")
			}
			return &catalogOutput{Body: WebhookCatalog{Strict: c.Strict}}, nil
		})
}
