package outbox

import (
	"context"
	"fmt"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// PublishTo is Publish addressed to one endpoint of the account, whatever event types
// it chose: for events that belong to that endpoint alone, such as the call status
// notifications of the application whose status hook it is. Errors are Publish's,
// and ErrNotFound for an endpoint that is not there, ErrEndpointNotActive for a
// disabled one (nothing is then stored for it).
func (o *Outbox) PublishTo(ctx context.Context, ev Event, endpointID string) (Published, error) {
	return o.publishTo(ctx, ev, endpointID, idempotency{})
}

func (o *Outbox) publishTo(ctx context.Context, ev Event, endpointID string, idem idempotency) (Published, error) {
	if _, err := o.store.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: ev.Account, ID: endpointID}); err != nil {
		return Published{}, err
	}
	pub, err := o.publish(ctx, nil, ev, func(ep Endpoint) bool { return ep.ID == endpointID }, idem)
	if err != nil {
		return Published{}, err
	}
	if len(pub.Deliveries) == 0 && !pub.Duplicate {
		return pub, fmt.Errorf("%w: endpoint %s takes no deliveries (disabled)", ErrEndpointNotActive, endpointID)
	}
	return pub, nil
}
