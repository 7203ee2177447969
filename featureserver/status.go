package featureserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/outbox"
)

// CallStatusEvent is the outbox event type of call status notifications.
const CallStatusEvent = "call.status"

// statusPublisher hands the call:status notifications of HTTP applications to the
// outbox, as call.status events for an endpoint per (account, status hook URL), so
// they survive a receiver that is down and a node restart (issue 6, Build 4).
type statusPublisher struct {
	ob  *outbox.Outbox
	log zerolog.Logger

	mu        sync.Mutex
	endpoints map[string]string // account + "\x00" + URL → endpoint id
}

func newStatusPublisher(ob *outbox.Outbox, log zerolog.Logger) *statusPublisher {
	return &statusPublisher{ob: ob, log: log, endpoints: map[string]string{}}
}

// StatusWebhookSecret is the Standard Webhooks secret (whsec_) that signs an
// account's status notifications: derived from its webhook secret, so that the
// account can compute it and nothing more needs to be stored or shown.
func StatusWebhookSecret(webhookSecret string) string {
	sum := sha256.Sum256([]byte("switchboard status hooks\x00" + webhookSecret))
	return "whsec_" + base64.StdEncoding.EncodeToString(sum[:])
}

// forCall returns the callctl.StatusNotifier of one call of account.
func (p *statusPublisher) forCall(account Account) callctl.StatusNotifier {
	return callStatusNotifier{p: p, account: account}
}

type callStatusNotifier struct {
	p       *statusPublisher
	account Account
}

// NotifyStatus publishes one notification; a failure to store it is logged (the call
// goes on, as after any failed status hook).
func (n callStatusNotifier) NotifyStatus(ctx context.Context, hook fragment.Target, payload map[string]any) {
	if err := n.p.publish(ctx, n.account, hook, payload); err != nil {
		n.p.log.Error().Err(err).Str("call_sid", fmt.Sprint(payload["call_sid"])).Str("url", hook.Clean()).
			Msg("call status notification could not be handed to the outbox")
	}
}

func (p *statusPublisher) publish(ctx context.Context, account Account, hook fragment.Target, payload map[string]any) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	// A notification already on its way is not lost when the call is canceled.
	ctx = context.WithoutCancel(ctx)
	id, err := p.endpoint(ctx, account, hook.Clean())
	if err != nil {
		return err
	}
	_, err = p.ob.PublishTo(ctx, outbox.Event{Account: account.Sid, Type: CallStatusEvent, Data: data}, id)
	if errors.Is(err, outbox.ErrNotFound) {
		// Removed meanwhile (digize-style 410 removal): make a new one next time.
		p.forget(account, hook.Clean())
	}
	return err
}

// endpoint finds or creates the account's endpoint for a status hook URL.
func (p *statusPublisher) endpoint(ctx context.Context, account Account, url string) (string, error) {
	key := account.Sid + "\x00" + url
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.endpoints[key]; ok {
		return id, nil
	}
	eps, err := p.ob.ListEndpoints(ctx, account.Sid)
	if err != nil {
		return "", err
	}
	for _, ep := range eps {
		if ep.URL == url && ep.Managed {
			p.endpoints[key] = ep.ID
			return ep.ID, nil
		}
	}
	allowHTTP := true
	ep, err := p.ob.CreateEndpoint(ctx, outbox.EndpointSpec{
		Account: account.Sid, URL: url, Events: []string{CallStatusEvent},
		Secrets:   []string{StatusWebhookSecret(account.WebhookSecret)},
		Profile:   outbox.ProfileStandard,
		Overrides: outbox.Overrides{AllowHTTP: &allowHTTP}, // application hooks are often plain http
		Managed:   true,                                    // installed by the node: never auto-paused
	})
	if err != nil {
		return "", fmt.Errorf("status hook endpoint for %s: %w", url, err)
	}
	p.endpoints[key] = ep.ID
	return ep.ID, nil
}

func (p *statusPublisher) forget(account Account, url string) {
	p.mu.Lock()
	delete(p.endpoints, account.Sid+"\x00"+url)
	p.mu.Unlock()
}

// renderStatus sends a call.status event as the application expects a status hook:
// the call's fields, flat (jambonz's shape); other events get the outbox envelope.
func renderStatus(ctx context.Context, ev outbox.Event, ep outbox.Endpoint) ([]byte, error) {
	if ev.Type == CallStatusEvent {
		return ev.Data, nil
	}
	return outbox.DefaultRenderer(ctx, ev, ep)
}

// observeDelivery counts outbox attempts by outcome and tracks the queue lag.
func (m *Metrics) observeDelivery(_ outbox.Delivery, a outbox.Attempt) {
	m.outboxOutcomes.WithLabelValues(string(a.Class)).Inc()
	if !a.ScheduledAt.IsZero() {
		m.outboxLag.Set(max(a.At.Sub(a.ScheduledAt), 0).Seconds())
	}
}
