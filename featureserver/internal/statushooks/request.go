package statushooks

import (
	"context"
	"net/http"

	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// dressRequest makes the outbox's delivery of a call status notification the status
// hook a jambonz application expects (docs/call-control.md §3): its configured method
// (GET sends the fields as query parameters), its Basic auth, and the Jambonz-Signature
// of the account's webhook secret over what is sent, beside the outbox's own Standard
// Webhooks signature and the node's User-Agent (outbox.Config.UserAgent). Other events
// go as the outbox builds them. A hook or an account that cannot be read leaves the
// request as it is, as the hook did before it was known.
func (p *Publisher) dressRequest(ctx context.Context, r *outbox.Request) error {
	if r.Event.Type != EventType {
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

// render sends a call.status event as the application expects a status hook: the
// call's fields, flat (jambonz's shape); other events get the outbox envelope.
func render(ctx context.Context, ev outbox.Event, ep outbox.Endpoint) ([]byte, error) {
	if ev.Type == EventType {
		return ev.Data, nil
	}
	return outbox.DefaultRenderer(ctx, ev, ep)
}
