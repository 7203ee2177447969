package outboxapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/outbox"
)

type listDeliveriesInput struct {
	ID      string `path:"id" maxLength:"128" doc:"Endpoint id"`
	Type    string `query:"type" maxLength:"128" doc:"Only deliveries of events of this type"`
	EventID string `query:"eventId" maxLength:"128" doc:"Only the deliveries of this event"`
	Status  string `query:"status" enum:"PENDING,SUCCEEDED,FAILED,DEAD,DROPPED"`
	Cursor  string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page"`
	Limit   int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type deliveryPath struct {
	ID         string `path:"id" maxLength:"128" doc:"Endpoint id"`
	DeliveryID string `path:"deliveryId" maxLength:"128"`
}

type retryInput struct {
	ID         string `path:"id" maxLength:"128" doc:"Endpoint id"`
	DeliveryID string `path:"deliveryId" maxLength:"128"`
	Reason     string `query:"reason" maxLength:"500" doc:"Why, for the audit log"`
}

type deliveryOutput struct{ Body WebhookDelivery }

type deliveryDetailOutput struct{ Body WebhookDeliveryDetail }

type deliveryListOutput struct{ Body DeliveryList }

type recoverInput struct {
	ID     string    `path:"id" maxLength:"128" doc:"Endpoint id"`
	Reason string    `query:"reason" maxLength:"500" doc:"Why, for the audit log"`
	Since  time.Time `query:"since" doc:"Only deliveries created at or after this time (RFC 3339); default all in the retention window"`
}

type recoverOutput struct{ Body Recovered }

func (s *server) registerDeliveries() {
	huma.Register(s.api, s.operation("list-webhook-deliveries", http.MethodGet, "/api/v1/webhooks/{id}/deliveries",
		"An endpoint's deliveries, newest first", http.StatusOK),
		func(ctx context.Context, in *listDeliveriesInput) (*deliveryListOutput, error) {
			before, err := cursorKey(cursorDeliveries, in.Cursor)
			if err != nil {
				return nil, err
			}
			account := principal(ctx).Account
			ds, err := s.ob.ListDeliveries(ctx, outbox.DeliveryQuery{Account: account, EndpointID: in.ID, Type: in.Type,
				EventID: in.EventID, Status: outbox.DeliveryStatus(in.Status), BeforeID: before, Limit: in.Limit})
			if err != nil {
				return nil, s.problem(err, "query")
			}
			if len(ds) == 0 && before == "" {
				// No such endpoint here (another account's, say) is a 404; a removed
				// one's log stays readable while it has deliveries.
				if _, err := s.ob.GetEndpoint(ctx, account, in.ID); err != nil {
					return nil, s.problem(err, "endpoint")
				}
			}
			out := &deliveryListOutput{}
			out.Body.Data, out.Body.NextCursor = keysetPage(cursorDeliveries, ds, in.Limit, deliveryJSON,
				func(d outbox.Delivery) string { return d.ID })
			return out, nil
		})

	huma.Register(s.api, s.operation("get-webhook-delivery", http.MethodGet, "/api/v1/webhooks/{id}/deliveries/{deliveryId}",
		"One delivery with its attempts, oldest first", http.StatusOK),
		func(ctx context.Context, in *deliveryPath) (*deliveryDetailOutput, error) {
			d, as, err := s.delivery(ctx, in)
			if err != nil {
				return nil, err
			}
			return &deliveryDetailOutput{Body: deliveryDetailJSON(d, as)}, nil
		})

	huma.Register(s.api, s.operation("retry-webhook-delivery", http.MethodPost, "/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry",
		"Send a finished delivery again with a fresh attempt budget", http.StatusAccepted),
		func(ctx context.Context, in *retryInput) (*deliveryOutput, error) {
			if _, _, err := s.delivery(ctx, &deliveryPath{ID: in.ID, DeliveryID: in.DeliveryID}); err != nil {
				return nil, err
			}
			d, err := s.ob.Retry(ctx, principal(ctx).Account, in.DeliveryID, actor(ctx, in.Reason))
			if err != nil {
				return nil, s.problem(err, "delivery")
			}
			return &deliveryOutput{Body: deliveryJSON(d)}, nil
		})

	huma.Register(s.api, s.operation("recover-webhook", http.MethodPost, "/api/v1/webhooks/{id}/recover",
		"Send again every FAILED delivery of an active endpoint created since a time", http.StatusAccepted),
		func(ctx context.Context, in *recoverInput) (*recoverOutput, error) {
			n, err := s.ob.Recover(ctx, principal(ctx).Account, in.ID, in.Since, actor(ctx, in.Reason))
			if err != nil {
				return nil, s.problem(err, "endpoint")
			}
			out := &recoverOutput{}
			out.Body.Recovered = n
			return out, nil
		})
}

// delivery reads the delivery of the path, which must be the path's endpoint's.
func (s *server) delivery(ctx context.Context, in *deliveryPath) (outbox.Delivery, []outbox.Attempt, error) {
	d, as, err := s.ob.GetDelivery(ctx, principal(ctx).Account, in.DeliveryID)
	if err == nil && d.EndpointID != in.ID {
		err = outbox.ErrNotFound
	}
	if err != nil {
		if errors.Is(err, outbox.ErrNotFound) {
			return outbox.Delivery{}, nil, huma.Error404NotFound("delivery not found")
		}
		return outbox.Delivery{}, nil, s.problem(err, "delivery")
	}
	return d, as, nil
}
