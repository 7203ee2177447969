package statushooks

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/outbox"
)

// alertGivenUp raises an alert on the account when a call status notification is
// given up (docs/call-control.md §6: a failed status hook is logged and alerted): d is
// the delivery as the attempt a left it.
func (p *Publisher) alertGivenUp(d outbox.Delivery, a outbox.Attempt) {
	if d.EventType != EventType || (d.Status != outbox.DeliveryFailed && d.Status != outbox.DeliveryDead) {
		return
	}
	// Observe must not block the dispatcher: the rest happens on the side.
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// jambonz's HTTP requestor alerts every failed hook, an error status
		// included, as webhook-connection-failure (lib/utils/http-requestor.js).
		alertType := callctl.AlertWebhookConnectionFailure
		alert := nodestore.Alert{AccountSid: d.Account, Type: string(alertType), CallSid: callSidOf(d.EventID), URL: p.urlOf(d.EndpointID),
			Detail: fmt.Sprintf("status hook: delivery %s %s after %d attempt(s): %s %s", d.ID, d.Status, d.Attempts, a.Class, a.Error),
			Time:   p.opts.Clock.Now().UTC()}
		if err := p.store.AddAlert(ctx, alert); err != nil {
			p.log.Error().Err(err).Msg("storing a status hook alert failed")
			return
		}
		p.opts.OnAlert(alert)
	}()
}
