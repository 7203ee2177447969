package outbox

import (
	"context"
	"encoding/json"
	"time"
)

// Renderer builds the body of one attempt. It runs at attempt time, so the endpoint's
// current APIVersion shapes every retry (docs/outbox.md §2 step 2). An error is a fault on
// our side: the delivery is rescheduled without using an attempt.
type Renderer func(ctx context.Context, ev Event, ep Endpoint) ([]byte, error)

// envelope is the default body.
type envelope struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	CreatedAt  time.Time       `json:"createdAt"`
	APIVersion string          `json:"apiVersion"`
	Data       json.RawMessage `json:"data"`
}

// DefaultRenderer wraps the event as {"id", "type", "createdAt", "apiVersion",
// "data"}, with the endpoint's APIVersion.
func DefaultRenderer(_ context.Context, ev Event, ep Endpoint) ([]byte, error) {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return json.Marshal(envelope{ID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC(), APIVersion: ep.APIVersion, Data: data})
}
