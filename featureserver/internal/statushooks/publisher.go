package statushooks

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/callctl"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/fragment"
	"github.com/switchboard-voice/switchboard/internal/jsjson"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/retry"
)

// EventType is the outbox event type of call status notifications.
const EventType = "call.status"

// Options configure a Publisher. Zero values take the defaults documented per field.
type Options struct {
	// Store keeps each status hook's configuration, which deliveries still queued
	// after a restart need, the accounts whose secrets sign them, and the alerts
	// about notifications given up. Required.
	Store nodestore.Store
	// OnAlert, when set, is told of each such alert once it is stored (the node
	// counts them). It runs off the outbox's dispatcher and may block briefly.
	// Default none.
	OnAlert func(nodestore.Alert)
	// Clock stamps the alerts. Default the wall clock.
	Clock retry.Clock
	// Logger receives the failures to hand a notification over or to store an alert.
	// Default: the zero Logger, which discards them.
	Logger zerolog.Logger
	// HookClient, when set, makes the attempts of the status hook endpoints
	// (Publisher.StatusEndpoint): status hooks are application URLs, reached under
	// the node's call-control egress rules, where every other endpoint of the outbox
	// goes through its Config.HTTPClient (public-only: docs/outbox.md §6). Default:
	// the outbox's client for every endpoint.
	HookClient *http.Client
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Clock == nil {
		o.Clock = retry.SystemClock{}
	}
	if o.OnAlert == nil {
		o.OnAlert = func(nodestore.Alert) {}
	}
	return o
}

// validate reports every bad value at once.
func (o Options) validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, errors.New("statushooks: Options.Store is required"))
	}
	return errors.Join(errs...)
}

// Publisher hands the call:status notifications of HTTP applications to the outbox,
// as EventType events for an endpoint per (account, status hook URL). It is safe for
// concurrent use.
type Publisher struct {
	ob    *outbox.Outbox
	store nodestore.Store
	opts  Options
	log   zerolog.Logger
	bg    sync.WaitGroup // alerts being stored off the dispatcher

	mu        sync.Mutex
	endpoints map[string]string             // account + "\x00" + URL → endpoint id
	hooks     map[string]nodestore.HookSpec // the same key → the hook as the application configured it
	urls      map[string]string             // endpoint id → URL, for alerts
	seq       map[string]int                // call sid → notifications published, for event ids
	// deliveries lists each call's status deliveries until its record holds them.
	deliveries map[string][]nodestore.StatusDelivery
}

// Open opens the outbox that cfg describes with the status hooks wired in: cfg's
// Renderer sends a notification's fields flat, as jambonz does, and its Request
// dresses each delivery as its status hook (Publisher.dressRequest); cfg.Observe,
// when set, still sees every attempt, before the publisher raises the alert of a
// notification given up. Nothing is delivered until the outbox is started
// (Outbox().Start). On error nothing is left open but cfg.Store, which stays the
// caller's.
func Open(ctx context.Context, cfg outbox.Config, opts Options) (*Publisher, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	p := &Publisher{store: opts.Store, opts: opts, log: opts.Logger, endpoints: map[string]string{},
		hooks: map[string]nodestore.HookSpec{}, urls: map[string]string{}, seq: map[string]int{},
		deliveries: map[string][]nodestore.StatusDelivery{}}
	observe := cfg.Observe
	cfg.Renderer, cfg.Request = p.render, p.dressRequest
	if opts.HookClient != nil {
		cfg.HTTPClientFor = func(ep outbox.Endpoint) *http.Client {
			if p.StatusEndpoint(context.Background(), ep) {
				return opts.HookClient
			}
			return nil
		}
	}
	cfg.Observe = func(d outbox.Delivery, a outbox.Attempt) {
		if observe != nil {
			observe(d, a)
		}
		p.alertGivenUp(d, a)
	}
	ob, err := outbox.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.ob = ob
	return p, nil
}

// Outbox returns the outbox the notifications go through: the caller starts and
// closes it.
func (p *Publisher) Outbox() *outbox.Outbox { return p.ob }

// Wait waits for the alerts being stored about notifications given up: call it once
// the outbox is closed, before the store is.
func (p *Publisher) Wait() { p.bg.Wait() }

func hookKey(account, url string) string { return account + "\x00" + url }

// SigningSecret is the Standard Webhooks secret (whsec_) that signs an account's
// status notifications: derived from its webhook secret, so that the account can
// compute it and nothing more needs to be stored or shown.
func SigningSecret(webhookSecret string) string {
	sum := sha256.Sum256([]byte("switchboard status hooks\x00" + webhookSecret))
	return "whsec_" + base64.StdEncoding.EncodeToString(sum[:])
}

// ForCall returns the callctl.StatusNotifier of one call of account whose status
// hook is hook.
func (p *Publisher) ForCall(account nodestore.Account, hook nodestore.HookSpec) callctl.StatusNotifier {
	return callStatusNotifier{p: p, account: account, hook: hook}
}

type callStatusNotifier struct {
	p       *Publisher
	account nodestore.Account
	hook    nodestore.HookSpec
}

// NotifyStatus publishes one notification; a failure to store it is logged (the call
// goes on, as after any failed status hook).
func (n callStatusNotifier) NotifyStatus(ctx context.Context, hook fragment.Target, payload map[string]any) {
	if err := n.p.publish(ctx, n.account, n.hook, hook, payload); err != nil {
		n.p.log.Error().Err(err).Str("call_sid", fmt.Sprint(payload["call_sid"])).Str("url", hook.Clean()).
			Msg("call status notification could not be handed to the outbox")
	}
}

func (p *Publisher) publish(ctx context.Context, account nodestore.Account, spec nodestore.HookSpec, hook fragment.Target, payload map[string]any) error {
	// The body is what jambonz's JSON.stringify would send, so that the account's
	// Jambonz-Signature over it survives a verifier that re-serialises it
	// (docs/call-control.md §3).
	data, err := jsjson.Marshal(payload)
	if err != nil {
		return err
	}
	if strings.EqualFold(spec.Method, http.MethodGet) {
		// jambonz sends no payload on a GET, neither body nor query
		// (lib/utils/http-requestor.js): only the URL's own query goes.
		data = []byte("{}")
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
	eventID := fmt.Sprintf("%s%s:%d", eventIDPrefix, callSid, p.seq[callSid])
	if status, _ := payload["call_status"].(string); callctl.Status(status).Final() {
		delete(p.seq, callSid) // the call's last notification
		// One id whoever sends it: the call itself, or the next start of a node
		// that crashed before the call's record was saved (Notify). The outbox
		// keeps it once.
		eventID = eventIDPrefix + callSid + ":" + finalEventSuffix
	}
	p.mu.Unlock()
	pub, err := p.ob.PublishTo(ctx, outbox.Event{ID: eventID, Account: account.Sid, Type: EventType, Data: data}, id)
	if err == nil && !pub.Duplicate {
		p.recordDeliveries(callSid, pub) // the call's record names them
	}
	if errors.Is(err, outbox.ErrNotFound) {
		// Removed meanwhile (digize-style 410 removal): make a new one next time.
		p.forget(account, hook.Clean())
	}
	return err
}

// eventIDPrefix starts the outbox event ids of call status notifications; the
// final notification's ends with finalEventSuffix, the others with their rank.
const (
	eventIDPrefix    = "call-status:"
	finalEventSuffix = "final"
)

// Notify publishes one status notification of a call that no longer runs (the final
// one of a call a crash cut short, at the node's next start): as NotifyStatus would
// have, but returning the error. A final notification the call had published itself
// is not published twice.
func (p *Publisher) Notify(ctx context.Context, account nodestore.Account, spec nodestore.HookSpec, target fragment.Target, payload map[string]any) error {
	err := p.publish(ctx, account, spec, target, payload)
	if status, _ := payload["call_status"].(string); callctl.Status(status).Final() && errors.Is(err, outbox.ErrConflict) {
		// The call published its own final notification before the crash, with
		// what it knew then: that one stands.
		return nil
	}
	return err
}

// callSidOf returns the call sid in a call status event id.
func callSidOf(eventID string) string {
	rest, ok := strings.CutPrefix(eventID, eventIDPrefix)
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
func (p *Publisher) hookFor(ctx context.Context, account, url string) (nodestore.HookSpec, bool) {
	key := hookKey(account, url)
	p.mu.Lock()
	h, ok := p.hooks[key]
	p.mu.Unlock()
	if ok {
		return h, true
	}
	h, err := p.store.GetStatusHook(ctx, nodestore.GetStatusHookParams{AccountSid: account, URL: url})
	if err != nil {
		if !errors.Is(err, nodestore.ErrNotFound) {
			p.log.Error().Err(err).Str("url", url).Msg("reading a status hook's configuration")
		}
		return nodestore.HookSpec{}, false
	}
	p.mu.Lock()
	if _, raced := p.hooks[key]; !raced {
		p.hooks[key] = h
	}
	h = p.hooks[key]
	p.mu.Unlock()
	return h, true
}

// StatusEndpoint reports whether ep is one of the status hook endpoints the node
// manages: managed, taking call.status only, at a URL an application of its
// account configured as its status hook. Only those are rendered and signed as
// jambonz status hooks and dialed under the call-control rules; an endpoint the
// account made, or changed to other events or to a URL no application of it
// configured, is an ordinary endpoint whatever its events carry.
func (p *Publisher) StatusEndpoint(ctx context.Context, ep outbox.Endpoint) bool {
	if !ep.Managed || len(ep.Events) != 1 || ep.Events[0] != EventType {
		return false
	}
	_, ok := p.hookFor(ctx, ep.Account, ep.URL)
	return ok
}

// urlOf returns the URL of a status endpoint, if known.
func (p *Publisher) urlOf(endpointID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.urls[endpointID]
}

// endpoint finds or creates the account's endpoint for a status hook URL.
func (p *Publisher) endpoint(ctx context.Context, account nodestore.Account, spec nodestore.HookSpec, url string) (string, error) {
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
	secret := SigningSecret(account.WebhookSecret)
	for _, ep := range eps {
		if ep.URL == url && ep.Managed {
			if len(ep.Secrets) == 0 || ep.Secrets[0].Key != secret {
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
		Account: account.Sid, URL: url, Events: []string{EventType},
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

// RotateAccount follows the rotation of an account's webhook secret: each of its
// status hook endpoints signing with the old secret's SigningSecret signs with the
// new one's, and with the old one beside it for grace (none: it stops at once).
func (p *Publisher) RotateAccount(ctx context.Context, old, rotated nodestore.Account, grace time.Duration, by outbox.Actor) error {
	eps, err := p.ob.ListEndpoints(ctx, rotated.Sid)
	if err != nil {
		return err
	}
	from, to := SigningSecret(old.WebhookSecret), SigningSecret(rotated.WebhookSecret)
	var errs []error
	for _, ep := range eps {
		if !ep.Managed || len(ep.Secrets) == 0 || ep.Secrets[0].Key != from {
			continue
		}
		if grace > 0 {
			_, _, err = p.ob.RotateSecretTo(ctx, rotated.Sid, ep.ID, to, grace, by)
		} else {
			_, err = p.ob.UpdateEndpoint(ctx, rotated.Sid, ep.ID, outbox.EndpointUpdate{Secrets: &[]string{to}, By: by})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("endpoint %s: %w", ep.ID, err))
		}
	}
	return errors.Join(errs...)
}

// remember makes spec the configuration of the hook at url (the latest wins), in
// memory and in the store; an unchanged one costs no write.
func (p *Publisher) remember(ctx context.Context, key, account, url string, spec nodestore.HookSpec) error {
	p.mu.Lock()
	cur, ok := p.hooks[key]
	p.mu.Unlock()
	if ok && sameHookConfig(cur, spec) {
		return nil
	}
	if err := p.store.SaveStatusHook(ctx, nodestore.SaveStatusHookParams{AccountSid: account, URL: url, Hook: spec, At: p.opts.Clock.Now()}); err != nil {
		return fmt.Errorf("recording the status hook for %s: %w", url, err)
	}
	p.mu.Lock()
	p.hooks[key] = spec
	p.mu.Unlock()
	return nil
}

func sameHookConfig(a, b nodestore.HookSpec) bool {
	return a.Method == b.Method && a.Username == b.Username && a.Password == b.Password
}

// Deliveries lists the outbox deliveries of a call's status notifications so far.
func (p *Publisher) Deliveries(callSid string) []nodestore.StatusDelivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]nodestore.StatusDelivery(nil), p.deliveries[callSid]...)
}

// Forget drops a call's list of deliveries, once its record holds it.
func (p *Publisher) Forget(callSid string) {
	p.mu.Lock()
	delete(p.deliveries, callSid)
	p.mu.Unlock()
}

// recordDeliveries remembers the deliveries of one of a call's notifications.
func (p *Publisher) recordDeliveries(callSid string, pub outbox.Published) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range pub.Deliveries {
		p.deliveries[callSid] = append(p.deliveries[callSid], nodestore.StatusDelivery{DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID})
	}
}

func (p *Publisher) forget(account nodestore.Account, url string) {
	p.mu.Lock()
	delete(p.endpoints, hookKey(account.Sid, url))
	p.mu.Unlock()
}

// NotifyMessage publishes the status of an SMS message to its actionHook
// (jambonz's message verb performAction: message_sid, message_status ...), through
// the outbox as a call's status notifications go. Its event id names the message.
func (p *Publisher) NotifyMessage(ctx context.Context, account nodestore.Account, spec nodestore.HookSpec, hook fragment.Target, payload map[string]any) error {
	data, err := jsjson.Marshal(payload)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	id, err := p.endpoint(ctx, account, spec, hook.Clean())
	if err != nil {
		return err
	}
	sid, _ := payload["message_sid"].(string)
	_, err = p.ob.PublishTo(ctx, outbox.Event{ID: "message-status:" + sid, Account: account.Sid, Type: EventType, Data: data}, id)
	if errors.Is(err, outbox.ErrNotFound) {
		p.forget(account, hook.Clean())
	}
	return err
}
