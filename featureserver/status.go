package featureserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// CallStatusEvent is the outbox event type of call status notifications.
const CallStatusEvent = "call.status"

// statusPublisher hands the call:status notifications of HTTP applications to the
// outbox, as call.status events for an endpoint per (account, status hook URL), so
// they survive a receiver that is down and a node restart (issue 6, Build 4).
type statusPublisher struct {
	ob  *outbox.Outbox
	log zerolog.Logger
	// store keeps each hook's configuration, which deliveries still queued after a
	// restart need; hooks caches it.
	store *Store

	mu        sync.Mutex
	endpoints map[string]string   // account + "\x00" + URL → endpoint id
	hooks     map[string]HookSpec // the same key → the hook as the application configured it
	urls      map[string]string   // endpoint id → URL, for alerts
	seq       map[string]int      // call sid → notifications published, for event ids
	// deliveries lists each call's status deliveries until its record holds them.
	deliveries map[string][]StatusDelivery
}

func newStatusPublisher(log zerolog.Logger, store *Store) *statusPublisher {
	return &statusPublisher{log: log, store: store, endpoints: map[string]string{}, hooks: map[string]HookSpec{},
		urls: map[string]string{}, seq: map[string]int{}, deliveries: map[string][]StatusDelivery{}}
}

func hookKey(account, url string) string { return account + "\x00" + url }

// StatusWebhookSecret is the Standard Webhooks secret (whsec_) that signs an
// account's status notifications: derived from its webhook secret, so that the
// account can compute it and nothing more needs to be stored or shown.
func StatusWebhookSecret(webhookSecret string) string {
	sum := sha256.Sum256([]byte("switchboard status hooks\x00" + webhookSecret))
	return "whsec_" + base64.StdEncoding.EncodeToString(sum[:])
}

// forCall returns the callctl.StatusNotifier of one call of account whose status
// hook is hook.
func (p *statusPublisher) forCall(account Account, hook HookSpec) callctl.StatusNotifier {
	return callStatusNotifier{p: p, account: account, hook: hook}
}

type callStatusNotifier struct {
	p       *statusPublisher
	account Account
	hook    HookSpec
}

// NotifyStatus publishes one notification; a failure to store it is logged (the call
// goes on, as after any failed status hook).
func (n callStatusNotifier) NotifyStatus(ctx context.Context, hook fragment.Target, payload map[string]any) {
	if err := n.p.publish(ctx, n.account, n.hook, hook, payload); err != nil {
		n.p.log.Error().Err(err).Str("call_sid", fmt.Sprint(payload["call_sid"])).Str("url", hook.Clean()).
			Msg("call status notification could not be handed to the outbox")
	}
}

func (p *statusPublisher) publish(ctx context.Context, account Account, spec HookSpec, hook fragment.Target, payload map[string]any) error {
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	// A notification already on its way is not lost when the call is canceled.
	ctx = context.WithoutCancel(ctx)
	id, err := p.endpoint(ctx, account, spec, hook.Clean())
	if err != nil {
		return err
	}
	// The event id names the call (alerts about a failed delivery report it) and
	// the notification's rank in the call.
	callSid, _ := payload["call_sid"].(string)
	p.mu.Lock()
	p.seq[callSid]++
	eventID := fmt.Sprintf("%s%s:%d", callStatusIDPrefix, callSid, p.seq[callSid])
	if status, _ := payload["call_status"].(string); callctl.Status(status).Final() {
		delete(p.seq, callSid) // the call's last notification
	}
	p.mu.Unlock()
	pub, err := p.ob.PublishTo(ctx, outbox.Event{ID: eventID, Account: account.Sid, Type: CallStatusEvent, Data: data}, id)
	if err == nil && !pub.Duplicate {
		p.recordDeliveries(callSid, pub) // the call's record names them
	}
	if errors.Is(err, outbox.ErrNotFound) {
		// Removed meanwhile (digize-style 410 removal): make a new one next time.
		p.forget(account, hook.Clean())
	}
	return err
}

// callStatusIDPrefix starts the outbox event ids of call status notifications.
const callStatusIDPrefix = "call-status:"

// callSidOf returns the call sid in a call status event id.
func callSidOf(eventID string) string {
	rest, ok := strings.CutPrefix(eventID, callStatusIDPrefix)
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// hookFor returns the status hook an account configured for url, if known: from
// memory, else as recorded before a restart.
func (p *statusPublisher) hookFor(ctx context.Context, account, url string) (HookSpec, bool) {
	key := hookKey(account, url)
	p.mu.Lock()
	h, ok := p.hooks[key]
	p.mu.Unlock()
	if ok {
		return h, true
	}
	h, err := p.store.StatusHook(ctx, account, url)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			p.log.Error().Err(err).Str("url", url).Msg("reading a status hook's configuration")
		}
		return HookSpec{}, false
	}
	p.mu.Lock()
	if _, raced := p.hooks[key]; !raced {
		p.hooks[key] = h
	}
	h = p.hooks[key]
	p.mu.Unlock()
	return h, true
}

// urlOf returns the URL of a status endpoint, if known.
func (p *statusPublisher) urlOf(endpointID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.urls[endpointID]
}

// endpoint finds or creates the account's endpoint for a status hook URL.
func (p *statusPublisher) endpoint(ctx context.Context, account Account, spec HookSpec, url string) (string, error) {
	key := hookKey(account.Sid, url)
	if err := p.remember(ctx, key, account.Sid, url, spec); err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if id, ok := p.endpoints[key]; ok {
		return id, nil
	}
	eps, err := p.ob.ListEndpoints(ctx, account.Sid)
	if err != nil {
		return "", err
	}
	secret := StatusWebhookSecret(account.WebhookSecret)
	for _, ep := range eps {
		if ep.URL == url && ep.Managed {
			if len(ep.Secrets) != 1 || ep.Secrets[0].Key != secret {
				// The account's webhook secret changed (a bootstrap file): sign with
				// the status webhook secret the account can now compute.
				if _, err := p.ob.UpdateEndpoint(ctx, account.Sid, ep.ID, outbox.EndpointUpdate{Secrets: &[]string{secret}}); err != nil {
					return "", fmt.Errorf("status hook endpoint for %s: new secret: %w", url, err)
				}
			}
			p.endpoints[key], p.urls[ep.ID] = ep.ID, url
			return ep.ID, nil
		}
	}
	allowHTTP := true
	ep, err := p.ob.CreateEndpoint(ctx, outbox.EndpointSpec{
		Account: account.Sid, URL: url, Events: []string{CallStatusEvent},
		Secrets:   []string{secret},
		Profile:   outbox.ProfileStandard,
		Overrides: outbox.Overrides{AllowHTTP: &allowHTTP}, // application hooks are often plain http
		Managed:   true,                                    // installed by the node: never auto-paused
	})
	if err != nil {
		return "", fmt.Errorf("status hook endpoint for %s: %w", url, err)
	}
	p.endpoints[key], p.urls[ep.ID] = ep.ID, url
	return ep.ID, nil
}

// remember makes spec the configuration of the hook at url (the latest wins), in
// memory and in the store; an unchanged one costs no write.
func (p *statusPublisher) remember(ctx context.Context, key, account, url string, spec HookSpec) error {
	p.mu.Lock()
	cur, ok := p.hooks[key]
	p.mu.Unlock()
	if ok && sameHookConfig(cur, spec) {
		return nil
	}
	if err := p.store.SaveStatusHook(ctx, account, url, spec); err != nil {
		return fmt.Errorf("recording the status hook for %s: %w", url, err)
	}
	p.mu.Lock()
	p.hooks[key] = spec
	p.mu.Unlock()
	return nil
}

func sameHookConfig(a, b HookSpec) bool {
	return a.Method == b.Method && a.Username == b.Username && a.Password == b.Password
}

func (p *statusPublisher) forget(account Account, url string) {
	p.mu.Lock()
	delete(p.endpoints, hookKey(account.Sid, url))
	p.mu.Unlock()
}

// dressRequest makes the outbox's delivery of a call status notification the status
// hook a jambonz application expects (docs/call-control.md §3): its configured method
// (GET sends the fields as query parameters), its Basic auth, and the Jambonz-Signature
// of the account's webhook secret over what is sent, beside the outbox's own Standard
// Webhooks signature and the node's User-Agent (outbox.Config.UserAgent). Other events
// go as the outbox builds them. A hook or an account that cannot be read leaves the
// request as it is, as the hook did before it was known.
func (p *statusPublisher) dressRequest(ctx context.Context, r *outbox.Request) error {
	if r.Event.Type != CallStatusEvent {
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
	if a, err := p.store.Account(ctx, r.Event.Account); err == nil && a.WebhookSecret != "" {
		r.Header.Set(webhooksig.JambonzSignatureHeader, webhooksig.SignJambonz(a.WebhookSecret, r.At, r.Body()))
	}
	return nil
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
