package featureserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/internal/smtpmail"
	"github.com/switchboard-voice/switchboard/outbox"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/outbox/outboxnotify"
)

// The node's outbox settings (docs/outbox.md §4, §6).
const (
	// EnvEgressDeny lists host names and .suffixes that no hook or webhook may reach.
	EnvEgressDeny = "SWITCHBOARD_EGRESS_DENY_HOSTS"
	// EnvSMTPURL is the SMTP server owners' notices are e-mailed through.
	EnvSMTPURL = "SWITCHBOARD_SMTP_URL"
)

// OutboxSettings are the node's settings of its webhook outbox.
type OutboxSettings struct {
	// EgressDeny are refused whatever they resolve to, by call control and the outbox:
	// names, and suffixes starting with a dot (transport.EgressRules.DenyHosts).
	EgressDeny []string
	// SMTPURL, when set, e-mails endpoint notices to each account's recipients:
	// smtp://[user:password@]host:port[?from=address] or smtps://... Secret.
	SMTPURL string
}

// loadOutboxSettings reads the outbox settings; bad values are *ConfigError.
func loadOutboxSettings(get func(string) string) (OutboxSettings, error) {
	var s OutboxSettings
	var errs []error
	if v := get(EnvEgressDeny); v != "" {
		for _, item := range strings.Split(v, ",") {
			item = strings.ToLower(strings.TrimSpace(item))
			if item == "" {
				continue
			}
			if !validHostName(strings.TrimPrefix(strings.TrimPrefix(item, "*"), ".")) {
				errs = append(errs, &ConfigError{Name: EnvEgressDeny, Value: v,
					Accept: fmt.Sprintf("a comma-separated list of host names and .suffixes (%q is neither)", item)})
				break
			}
			s.EgressDeny = append(s.EgressDeny, item)
		}
	}
	if v := get(EnvSMTPURL); v != "" {
		if _, err := smtpmail.Parse(v); err != nil {
			errs = append(errs, &ConfigError{Name: EnvSMTPURL, Value: "(hidden)", Accept: "smtp://[user:password@]host:port[?from=address] or smtps://...: " +
				strings.TrimPrefix(err.Error(), smtpmail.ErrInvalidURL.Error()+": ")})
		} else {
			s.SMTPURL = v
		}
	}
	return s, errors.Join(errs...)
}

// tokenID names an API token in the audit log without revealing it: a prefix of the
// hash the store keeps.
func tokenID(token string) string { return "tok_" + hashToken(token)[:16] }

// registerWebhookAPI mounts the outbox API (/api/v1/...) on the node's API,
// authenticated by the accounts' API tokens, and the accounts' notice settings.
func (n *Node) registerWebhookAPI(api huma.API) error {
	rules := callControlRules(n.cfg)
	err := outboxapi.Register(api, outboxapi.Config{
		Outbox: n.outbox, Egress: &rules, Logger: n.log,
		Authenticate: func(ctx context.Context, token string) (outboxapi.Principal, error) {
			acct, err := n.store.AccountByToken(ctx, token)
			if errors.Is(err, ErrNotFound) {
				return outboxapi.Principal{}, outboxapi.ErrUnauthenticated
			}
			if err != nil {
				return outboxapi.Principal{}, err
			}
			return outboxapi.Principal{Account: acct.Sid, Actor: tokenID(token)}, nil
		},
	})
	if err != nil {
		return err
	}
	n.registerNotifications(api)
	return nil
}

// Notifications are where an account's endpoint notices go.
type Notifications struct {
	WebhookURL string   `json:"webhook_url" maxLength:"2048" doc:"Operational webhook: receives endpoint.paused, endpoint.disabled and endpoint.removed events, signed with the status_webhook_secret; empty for none"`
	Emails     []string `json:"emails" maxItems:"20" doc:"E-mailed each notice when the node has SWITCHBOARD_SMTP_URL"`
}

type notificationsInput struct {
	AccountParams
	Body Notifications
}

type notificationsOutput struct{ Body Notifications }

func (n *Node) registerNotifications(api huma.API) {
	a := &API{store: n.store, log: n.log}
	huma.Register(api, huma.Operation{
		OperationID: "get-account-notifications", Method: http.MethodGet, Path: "/v1/Accounts/{account}/Notifications",
		Summary: "Where the account's webhook endpoint notices go",
	}, func(ctx context.Context, in *struct{ AccountParams }) (*notificationsOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		s, err := n.store.Notifications(ctx, acct.Sid)
		if err != nil {
			return nil, a.internal(err)
		}
		return &notificationsOutput{Body: s}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "set-account-notifications", Method: http.MethodPut, Path: "/v1/Accounts/{account}/Notifications",
		Summary: "Set where the account's webhook endpoint notices go (paused, disabled, removed)", MaxBodyBytes: maxRequestBody,
	}, func(ctx context.Context, in *notificationsInput) (*notificationsOutput, error) {
		acct, err := a.authorize(ctx, in.AccountParams)
		if err != nil {
			return nil, err
		}
		s := in.Body
		if s.WebhookURL != "" {
			rules := callControlRules(n.cfg)
			if err := checkNoticeURL(rules.CheckURL, s.WebhookURL); err != nil {
				return nil, huma.Error422UnprocessableEntity("invalid notifications", &huma.ErrorDetail{Location: "body.webhook_url", Message: err.Error(), Value: s.WebhookURL})
			}
		}
		for i, e := range s.Emails {
			if addr, err := mail.ParseAddress(e); err != nil || addr.Address != e {
				return nil, huma.Error422UnprocessableEntity("invalid notifications", &huma.ErrorDetail{Location: fmt.Sprintf("body.emails[%d]", i), Message: "not an e-mail address", Value: e})
			}
		}
		if s.Emails == nil {
			s.Emails = []string{}
		}
		if err := n.store.SaveNotifications(ctx, acct.Sid, s); err != nil {
			return nil, a.internal(err)
		}
		return &notificationsOutput{Body: s}, nil
	})
}

// newNotifier sends the outbox's notices to each account's recipients.
func (n *Node) newNotifier() (*outboxnotify.Notifier, error) {
	var sender *smtpmail.Sender
	if n.cfg.Outbox.SMTPURL != "" {
		var err error
		if sender, err = smtpmail.Parse(n.cfg.Outbox.SMTPURL); err != nil {
			return nil, err
		}
	}
	return outboxnotify.New(outboxnotify.Config{Mail: sender, Logger: n.log,
		Recipients: func(ctx context.Context, account string) (outboxnotify.Recipients, error) {
			acct, err := n.store.Account(ctx, account)
			if err != nil {
				return outboxnotify.Recipients{}, err
			}
			s, err := n.store.Notifications(ctx, account)
			if err != nil {
				return outboxnotify.Recipients{}, err
			}
			return outboxnotify.Recipients{WebhookURL: s.WebhookURL, WebhookSecret: StatusWebhookSecret(acct.WebhookSecret), Emails: s.Emails}, nil
		}})
}

// Notifications returns where an account's notices go (none set: empty).
func (s *Store) Notifications(ctx context.Context, accountSid string) (Notifications, error) {
	var (
		n      Notifications
		emails string
	)
	err := s.db.QueryRowContext(ctx, `SELECT webhook_url, emails FROM fs_account_notifications WHERE account_sid = ?`, accountSid).Scan(&n.WebhookURL, &emails)
	if errors.Is(err, sql.ErrNoRows) {
		return Notifications{Emails: []string{}}, nil
	}
	if err != nil {
		return Notifications{}, err
	}
	if err := json.Unmarshal([]byte(emails), &n.Emails); err != nil {
		return Notifications{}, err
	}
	return n, nil
}

// SaveNotifications sets where an account's notices go.
func (s *Store) SaveNotifications(ctx context.Context, accountSid string, n Notifications) error {
	emails, err := json.Marshal(n.Emails)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO fs_account_notifications (account_sid, webhook_url, emails, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (account_sid) DO UPDATE SET webhook_url = excluded.webhook_url, emails = excluded.emails, updated_at = excluded.updated_at`,
		accountSid, n.WebhookURL, string(emails), s.now().UnixMilli())
	return err
}

// StatusDelivery names one outbox delivery of a call's status notifications, to be
// read in the outbox API (GET /api/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}).
type StatusDelivery struct {
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
}

// statusDeliveriesOf lists the deliveries of a call's status notifications so far.
func (p *statusPublisher) statusDeliveriesOf(callSid string) []StatusDelivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]StatusDelivery(nil), p.deliveries[callSid]...)
}

// recordDeliveries remembers the deliveries of a call's notification; forget drops
// the call's list once its record holds it.
func (p *statusPublisher) recordDeliveries(callSid string, pub outbox.Published) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range pub.Deliveries {
		p.deliveries[callSid] = append(p.deliveries[callSid], StatusDelivery{DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID})
	}
}

func (p *statusPublisher) forgetDeliveries(callSid string) {
	p.mu.Lock()
	delete(p.deliveries, callSid)
	p.mu.Unlock()
}

// checkNoticeURL accepts an absolute http(s) URL the egress rules do not refuse.
func checkNoticeURL(check func(u *url.URL) error, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("must be an absolute http or https URL")
	}
	if err := check(u); err != nil {
		return fmt.Errorf("refused: %v", err)
	}
	return nil
}

// noticeTimeout bounds how long Close waits for queued notices.
const noticeTimeout = 5 * time.Second
