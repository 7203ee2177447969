package statushooks

import (
	"context"
	"net/http"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// dressRequest makes the outbox's delivery to a status hook endpoint
// (StatusEndpoint) the status hook a jambonz application expects
// (docs/call-control.md §3): its configured method (GET sends the fields as query
// parameters), its Basic auth, and the Jambonz-Signature of the account's webhook
// secret over what is sent, beside the outbox's own Standard Webhooks signature and
// the node's User-Agent (outbox.Config.UserAgent). Deliveries to other endpoints go
// as the outbox builds them, whatever their event's type. A hook or an account that
// cannot be read leaves the request as it is, as the hook did before it was known.
func (p *Publisher) dressRequest(ctx context.Context, r *outbox.Request) error {
	if !p.StatusEndpoint(ctx, r.Endpoint) {
		return nil
	}
	// The endpoint's URL is the hook's, its own query included: that is the key.
	if hook, ok := p.hookFor(ctx, r.Event.Account, r.Endpoint.URL); ok {
		if hook.Username != "" {
			r.SetBasicAuth(hook.Username, hook.Password)
		}
		if hook.Method == http.MethodGet {
			r.Method = http.MethodGet
		}
	}
	if a, err := p.store.GetAccount(ctx, r.Event.Account); err == nil && a.WebhookSecret != "" {
		r.Header.Set(webhooksig.JambonzSignatureHeader, webhooksig.SignJambonz(a.WebhookSecret, r.At, r.Body()))
	}
	return nil
}

// render sends what goes to a status hook endpoint (StatusEndpoint) as the
// application expects a status hook: the call's fields, flat (jambonz's shape);
// every other endpoint gets the outbox envelope, a call.status event an account
// published to its own endpoint included.
func (p *Publisher) render(ctx context.Context, ev outbox.Event, ep outbox.Endpoint) ([]byte, error) {
	if p.StatusEndpoint(ctx, ep) {
		return ev.Data, nil
	}
	return outbox.DefaultRenderer(ctx, ev, ep)
}
