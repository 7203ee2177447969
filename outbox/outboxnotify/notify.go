package outboxnotify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-voice/switchboard/internal/smtpmail"
	"github.com/switchboard-voice/switchboard/outbox"
)

// Recipients are where an account's notices go. Empty fields send nothing there.
type Recipients struct {
	// WebhookURL receives every notice as an event through the outbox: a managed
	// endpoint of the account (never paused by the outbox) taking the notice types.
	WebhookURL string
	// WebhookSecret signs those deliveries (whsec_ or whsk_); empty keeps the
	// endpoint's own (a new one for a new endpoint).
	WebhookSecret string
	// Emails receive every notice by e-mail, when Config.Mail is set.
	Emails []string
}

// Types are the event types of notices on the operational webhook.
var Types = []string{outbox.AuditPaused, outbox.AuditDisabled, outbox.AuditRemoved}

// Config configures a Notifier. Zero values take the defaults documented per field.
type Config struct {
	// Recipients says where an account's notices go. Required.
	Recipients func(ctx context.Context, account string) (Recipients, error)
	// Mail sends the e-mails. Default none: no e-mail is sent.
	Mail *smtpmail.Sender
	// Logger receives what could not be sent. Default: the zero Logger (discarded).
	Logger zerolog.Logger
	// QueueSize bounds the notices waiting to be sent. Default 1024.
	QueueSize int
	// Timeout bounds the sending of one notice (its webhook event stored, its e-mail
	// sent). Default 30 s.
	Timeout time.Duration
}

// WithDefaults returns c with every zero value replaced by its default.
func (c Config) WithDefaults() Config {
	if c.QueueSize <= 0 {
		c.QueueSize = 1024
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	return c
}

// Notifier sends notices. Its Notify goes in outbox.Config.Notify; Start gives it
// the outbox, once open.
type Notifier struct {
	cfg   Config
	queue chan outbox.Notice
	done  chan struct{}

	mu        sync.Mutex
	started   bool
	closed    bool
	endpoints map[string]string // account + "\x00" + URL → the operational endpoint's id
}

// New returns a Notifier; a Config without Recipients is an error.
func New(cfg Config) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if cfg.Recipients == nil {
		return nil, errors.New("outboxnotify: Config.Recipients is required")
	}
	return &Notifier{cfg: cfg, queue: make(chan outbox.Notice, cfg.QueueSize), done: make(chan struct{}),
		endpoints: map[string]string{}}, nil
}

// Notify queues a notice without blocking (outbox.Config.Notify must not block). A
// notice that finds the queue full, or the Notifier closed, is logged and dropped.
func (n *Notifier) Notify(nt outbox.Notice) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.dropped(nt, "notifier closed")
		return
	}
	select {
	case n.queue <- nt:
	default:
		n.dropped(nt, "queue full")
	}
}

func (n *Notifier) dropped(nt outbox.Notice, why string) {
	n.cfg.Logger.Error().Str("account", nt.Account).Str("endpoint", nt.EndpointID).Str("action", nt.Action).
		Msg("outboxnotify: notice dropped (" + why + "); it stays in the audit log")
}

// Start sends the queued notices, and those to come, through ob until Close. It
// must be called once.
func (n *Notifier) Start(ob *outbox.Outbox) {
	n.mu.Lock()
	if n.started {
		n.mu.Unlock()
		panic("outboxnotify: Start called twice")
	}
	n.started = true
	n.mu.Unlock()
	go func() {
		defer close(n.done)
		for nt := range n.queue {
			n.send(ob, nt)
		}
	}()
}

// Close stops taking notices and waits for the queued ones to be sent, until ctx
// ends (its error then). It is safe to call twice, and before Start.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.queue)
	}
	started := n.started
	n.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-n.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send sends one notice to its account's recipients.
func (n *Notifier) send(ob *outbox.Outbox, nt outbox.Notice) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
	defer cancel()
	log := n.cfg.Logger.With().Str("account", nt.Account).Str("endpoint", nt.EndpointID).Str("action", nt.Action).Logger()
	to, err := n.cfg.Recipients(ctx, nt.Account)
	if err != nil {
		log.Error().Err(err).Msg("outboxnotify: reading the account's recipients failed; notice not sent")
		return
	}
	if to.WebhookURL != "" {
		if err := n.publish(ctx, ob, nt, to); err != nil {
			log.Error().Err(err).Str("url", to.WebhookURL).Msg("outboxnotify: the notice could not be published to the operational webhook")
		}
	}
	if n.cfg.Mail != nil && len(to.Emails) > 0 {
		subject, body := mail(nt)
		if err := n.cfg.Mail.Send(ctx, to.Emails, subject, body); err != nil {
			log.Error().Err(err).Msg("outboxnotify: the notice e-mail could not be sent")
		}
	}
}

// noticeData is the data of a notice's event.
type noticeData struct {
	EndpointID string    `json:"endpointId"`
	URL        string    `json:"url"`
	Action     string    `json:"action"`
	Reason     string    `json:"reason"`
	Actor      string    `json:"actor"`
	At         time.Time `json:"at"`
}

// publish stores the notice as an event for the account's operational endpoint. The
// event id names the endpoint, the action and its time, so that a notice published
// twice is sent once.
func (n *Notifier) publish(ctx context.Context, ob *outbox.Outbox, nt outbox.Notice, to Recipients) error {
	data, err := json.Marshal(noticeData{EndpointID: nt.EndpointID, URL: nt.URL, Action: nt.Action, Reason: nt.Reason, Actor: nt.Actor, At: nt.At.UTC()})
	if err != nil {
		return err
	}
	ev := outbox.Event{ID: fmt.Sprintf("notice:%s:%s:%d", nt.EndpointID, strings.TrimPrefix(nt.Action, "endpoint."), nt.At.UnixMicro()),
		Account: nt.Account, Type: nt.Action, CreatedAt: nt.At, Data: data}
	for try := 0; ; try++ {
		id, err := n.endpoint(ctx, ob, nt.Account, to)
		if err != nil {
			return err
		}
		if id == nt.EndpointID {
			return nil // the operational endpoint itself: it cannot hear about its own removal
		}
		_, err = ob.PublishTo(ctx, ev, id)
		if errors.Is(err, outbox.ErrNotFound) && try == 0 {
			n.forget(nt.Account, to.WebhookURL) // removed meanwhile: install it again
			continue
		}
		return err
	}
}

// endpoint finds or installs the account's operational endpoint for to.WebhookURL.
func (n *Notifier) endpoint(ctx context.Context, ob *outbox.Outbox, account string, to Recipients) (string, error) {
	key := account + "\x00" + to.WebhookURL
	n.mu.Lock()
	id, ok := n.endpoints[key]
	n.mu.Unlock()
	if ok {
		return id, nil
	}
	eps, err := ob.ListEndpoints(ctx, account)
	if err != nil {
		return "", err
	}
	for _, ep := range eps {
		if ep.URL == to.WebhookURL && ep.Managed && slices.Equal(ep.Events, Types) {
			if to.WebhookSecret != "" && (len(ep.Secrets) != 1 || ep.Secrets[0].Key != to.WebhookSecret) {
				if _, err := ob.UpdateEndpoint(ctx, account, ep.ID, outbox.EndpointUpdate{Secrets: &[]string{to.WebhookSecret}}); err != nil {
					return "", fmt.Errorf("operational webhook %s: new secret: %w", to.WebhookURL, err)
				}
			}
			id = ep.ID
			break
		}
	}
	if id == "" {
		allowHTTP := true
		spec := outbox.EndpointSpec{Account: account, URL: to.WebhookURL, Events: Types, Profile: outbox.ProfileStandard,
			Overrides: outbox.Overrides{AllowHTTP: &allowHTTP}, Managed: true}
		if to.WebhookSecret != "" {
			spec.Secrets = []string{to.WebhookSecret}
		}
		ep, err := ob.CreateEndpoint(ctx, spec)
		if err != nil {
			return "", fmt.Errorf("operational webhook %s: %w", to.WebhookURL, err)
		}
		id = ep.ID
	}
	n.mu.Lock()
	n.endpoints[key] = id
	n.mu.Unlock()
	return id, nil
}

func (n *Notifier) forget(account, url string) {
	n.mu.Lock()
	delete(n.endpoints, account+"\x00"+url)
	n.mu.Unlock()
}

// mail is the subject and body of a notice's e-mail.
func mail(nt outbox.Notice) (subject, body string) {
	what := strings.TrimPrefix(nt.Action, "endpoint.")
	subject = fmt.Sprintf("Switchboard: webhook endpoint %s %s", nt.EndpointID, what)
	if nt.Reason != "" {
		subject += " (" + nt.Reason + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The webhook endpoint %s of account %s was %s.\n\n", nt.EndpointID, nt.Account, what)
	fmt.Fprintf(&b, "URL:    %s\nReason: %s\nBy:     %s\nAt:     %s\n\n", nt.URL, nt.Reason, nt.Actor, nt.At.UTC().Format(time.RFC3339))
	switch nt.Action {
	case outbox.AuditPaused:
		b.WriteString("Nothing more is sent to it until it is resumed (POST /api/v1/webhooks/{id}/resume,\nor switchboard webhooks resume). Its delivery log shows the failed attempts.\n")
	case outbox.AuditDisabled:
		b.WriteString("Its waiting deliveries were dropped. A disabled endpoint cannot be resumed: fix the\nreceiver, then create the endpoint again (it gets a new secret).\n")
	case outbox.AuditRemoved:
		b.WriteString("Its waiting deliveries were dropped; its delivery log stays readable for 7 days.\n")
	}
	return subject, b.String()
}
