package featureserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodeapi"
	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/featureserver/internal/statushooks"
	"github.com/switchboard-voice/switchboard/internal/smtpmail"
	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
	"github.com/switchboard-voice/switchboard/outbox/outboxnotify"
	"github.com/switchboard-voice/switchboard/retry"
	"github.com/switchboard-voice/switchboard/transport"
)

// The node's outbox settings (docs/outbox.md §4, §6).
const (
	// EnvOutboxEgressAllow lists CIDRs, addresses and host names that webhook
	// endpoints and notice URLs may reach although the public-only rules refuse them:
	// the outbox's twin of EnvEgressAllow, which widens call control only.
	EnvOutboxEgressAllow = "SWITCHBOARD_OUTBOX_EGRESS_ALLOW"
	// EnvEgressDeny lists host names and .suffixes that no hook or webhook may reach.
	EnvEgressDeny = "SWITCHBOARD_EGRESS_DENY_HOSTS"
	// EnvSMTPURL is the SMTP server owners' notices are e-mailed through.
	EnvSMTPURL = "SWITCHBOARD_SMTP_URL"
	// EnvOutboxLease is how long a node's claim holds a delivery before another
	// node's reaper may take it back (outbox.Config.LeaseDuration).
	EnvOutboxLease = "SWITCHBOARD_OUTBOX_LEASE_MS"
	// EnvEgressProxy is the HTTP CONNECT proxy every webhook delivery goes through
	// (docs/outbox.md §6), for a static source address.
	EnvEgressProxy = "SWITCHBOARD_EGRESS_PROXY"
)

var envOutboxLease = intSetting{EnvOutboxLease, 2000, 600_000, "milliseconds"}

// OutboxSettings are the node's settings of its webhook outbox.
type OutboxSettings struct {
	// EgressAllow lists CIDRs and host names that webhook endpoints and notice URLs
	// (URLs an account sets) may reach although the public-only rules refuse them
	// (docs/outbox.md §6). Default none: public addresses only.
	EgressAllow EgressAllowList
	// EgressDeny are refused whatever they resolve to, by call control and the outbox:
	// names, and suffixes starting with a dot (transport.EgressRules.DenyHosts).
	EgressDeny []string
	// SMTPURL, when set, e-mails endpoint notices to each account's recipients:
	// smtp://[user:password@]host:port[?from=address] or smtps://... Secret.
	SMTPURL string
	// LeaseDuration is how long a claim holds a delivery: when a node dies, its
	// deliveries in flight are attempted again by another once it ran out, and the
	// reaper looks for them every quarter of it (15 s at most). Attempts are cut at
	// half of it. Default 2 min (outbox.Config's).
	LeaseDuration time.Duration
	// EgressProxy, when set, is the HTTP CONNECT proxy (http://[user:password@]host:port)
	// the outbox reaches every endpoint through: the destination is resolved and
	// checked by the egress rules first, and the proxy asked for that address.
	// Call-control hooks and WebSockets connect directly. Its user-info is secret.
	EgressProxy string
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
			if !validDenyHost(item) {
				errs = append(errs, &ConfigError{Name: EnvEgressDeny, Value: v,
					Accept: fmt.Sprintf("a comma-separated list of host names and .suffixes (%q is neither)", item)})
				break
			}
			s.EgressDeny = append(s.EgressDeny, item)
		}
	}
	allow, err := parseEgressAllow(EnvOutboxEgressAllow, get(EnvOutboxEgressAllow))
	s.EgressAllow = allow
	errs = append(errs, err)
	if v := get(EnvSMTPURL); v != "" {
		if _, err := smtpmail.Parse(v); err != nil {
			errs = append(errs, &ConfigError{Name: EnvSMTPURL, Value: "(hidden)", Accept: "smtp://[user:password@]host:port[?from=address] or smtps://...: " +
				strings.TrimPrefix(err.Error(), smtpmail.ErrInvalidURL.Error()+": ")})
		} else {
			s.SMTPURL = v
		}
	}
	lease, err := envOutboxLease.duration(get(EnvOutboxLease))
	s.LeaseDuration = lease
	errs = append(errs, err)
	if v := get(EnvEgressProxy); v != "" {
		if _, err := transport.ParseProxyURL(v); err != nil {
			errs = append(errs, &ConfigError{Name: EnvEgressProxy, Value: "(hidden)",
				Accept: "http://[user:password@]host:port, an HTTP CONNECT proxy: " + strings.TrimPrefix(err.Error(), transport.ErrBadProxyURL.Error()+": ")})
		} else {
			s.EgressProxy = v
		}
	}
	return s, errors.Join(errs...)
}

// validDenyHost accepts a host name or a .suffix (or *.suffix) of one.
func validDenyHost(item string) bool {
	return validHostName(strings.TrimPrefix(strings.TrimPrefix(item, "*"), "."))
}

// validate reports every bad value of settings built in Go at once.
func (s OutboxSettings) validate() error {
	var errs []error
	errs = append(errs, s.EgressAllow.validate("Config.Outbox.EgressAllow"))
	for _, h := range s.EgressDeny {
		if !validDenyHost(h) {
			errs = append(errs, &ConfigError{Name: "Config.Outbox.EgressDeny", Value: h, Accept: "host names and .suffixes"})
		}
	}
	if s.SMTPURL != "" {
		if _, err := smtpmail.Parse(s.SMTPURL); err != nil {
			errs = append(errs, &ConfigError{Name: "Config.Outbox.SMTPURL", Value: "(hidden)", Accept: "smtp://[user:password@]host:port[?from=address] or smtps://..."})
		}
	}
	if s.LeaseDuration != 0 {
		errs = append(errs, envOutboxLease.checkDuration("Config.Outbox.LeaseDuration", s.LeaseDuration))
	}
	if s.EgressProxy != "" {
		if _, err := transport.ParseProxyURL(s.EgressProxy); err != nil {
			errs = append(errs, &ConfigError{Name: "Config.Outbox.EgressProxy", Value: "(hidden)", Accept: "http://[user:password@]host:port"})
		}
	}
	return errors.Join(errs...)
}

// tokenID names an API token in the audit log without revealing it: a prefix of the
// hash the store keeps.
func tokenID(token string) string { return "tok_" + nodestore.HashToken(token)[:16] }

// registerWebhookAPI mounts the outbox API (/api/v1/...) on the node's API,
// authenticated by the accounts' API tokens.
func (n *Node) registerWebhookAPI(api huma.API) error {
	rules := webhookRules(n.cfg)
	err := outboxapi.Register(api, outboxapi.Config{
		Outbox: n.outbox, Egress: &rules, Logger: n.log, Clock: retry.SystemClock{},
		Authenticate: func(ctx context.Context, token string) (outboxapi.Principal, error) {
			if wait, ok := n.limiter.Check(ctx, ""); !ok {
				return outboxapi.Principal{}, nodeapi.TooManyFailures(wait)
			}
			acct, err := n.store.AccountByToken(ctx, nodestore.HashToken(token))
			if errors.Is(err, nodestore.ErrNotFound) {
				n.limiter.Failed(ctx, "")
				return outboxapi.Principal{}, outboxapi.ErrUnauthenticated
			}
			if err != nil {
				return outboxapi.Principal{}, err
			}
			n.limiter.Succeeded(ctx, acct.Sid)
			return outboxapi.Principal{Account: acct.Sid, Actor: tokenID(token)}, nil
		},
		// The console's sessions act for their account in-process (nodeapi.Caller).
		FromContext: func(ctx context.Context) (outboxapi.Principal, bool, error) {
			c, ok := nodeapi.CallerOf(ctx)
			if !ok {
				return outboxapi.Principal{}, false, nil
			}
			acct, err := nodeapi.ResolveCaller(ctx, n.store, c)
			if errors.Is(err, nodeapi.ErrCallerRevoked) {
				return outboxapi.Principal{}, true, fmt.Errorf("%w: %w", outboxapi.ErrUnauthenticated, err)
			}
			if err != nil {
				return outboxapi.Principal{}, true, err
			}
			actor := "session"
			if c.TokenHash != "" {
				actor = "tok_" + c.TokenHash[:16] // as tokenID names the token
			}
			return outboxapi.Principal{Account: acct.Sid, Actor: actor}, true, nil
		},
	})
	return err
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
			acct, err := n.store.GetAccount(ctx, account)
			if err != nil {
				return outboxnotify.Recipients{}, err
			}
			s, err := n.store.GetNotifications(ctx, account)
			if err != nil {
				return outboxnotify.Recipients{}, err
			}
			return outboxnotify.Recipients{WebhookURL: s.WebhookURL, WebhookSecret: statushooks.SigningSecret(acct.WebhookSecret), Emails: s.Emails}, nil
		}})
}

// noticeTimeout bounds how long Close waits for queued notices.
const noticeTimeout = 5 * time.Second
