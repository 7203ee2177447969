package outbox

import (
	"context"
	"encoding/json"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-voice/switchboard/outbox/internal/decide"
	"github.com/switchboard-voice/switchboard/outbox/internal/ids"
	"github.com/switchboard-voice/switchboard/outbox/internal/policy"
	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
	"github.com/switchboard-voice/switchboard/transport/webhooksig"
)

// EndpointSpec is what CreateEndpoint needs.
type EndpointSpec struct {
	Account string
	URL     string
	// Events filters event types; empty means "*".
	Events     []string
	APIVersion string
	// Secrets are "whsec_"/"whsk_" keys; empty generates one whsec_ secret.
	Secrets []string
	// Headers are sent on every attempt (docs/outbox.md §1): not a reserved name
	// (ReservedHeader), at most MaxHeaders.
	Headers map[string]string
	// Channels, when given, are the only channels the endpoint takes events of.
	Channels []string
	// Filter, when given, is the JSON condition on an event's data that decides
	// whether the endpoint gets it (docs/outbox.md §1, filters).
	Filter json.RawMessage
	// RateLimit caps the deliveries started per second (0: none; at most
	// MaxRateLimit), across every node sharing the store.
	RateLimit int
	Profile   string
	Overrides Overrides
	Managed   bool
	// By is who creates it, for the audit log.
	By Actor
}

// EndpointUpdate changes an endpoint; nil fields stay as they are.
type EndpointUpdate struct {
	URL        *string
	Events     *[]string
	APIVersion *string
	Profile    *string
	Overrides  *Overrides
	Managed    *bool
	// Secrets replaces the signing keys (whsec_ and whsk_, newest first) at once: the
	// old ones stop signing, where RotateSecret keeps them signing for a while.
	Secrets *[]string
	// Headers sets each header given and removes each given nil; the others keep
	// their value.
	Headers map[string]*string
	// Channels replaces the channels (empty: none).
	Channels *[]string
	// Filter replaces the filter (empty or null: none).
	Filter *json.RawMessage
	// RateLimit replaces the rate limit (0: none).
	RateLimit *int
	// By is who changes it, for the audit entry of a change of keys.
	By Actor
}

// DefaultRotationGrace is how long an old secret keeps signing after RotateSecret.
const DefaultRotationGrace = 24 * time.Hour

// CreateEndpoint validates spec and stores an ACTIVE endpoint. The returned Endpoint's
// Secrets hold the keys: show them once. A bad spec is a *ValidationError.
func (o *Outbox) CreateEndpoint(ctx context.Context, spec EndpointSpec) (Endpoint, error) {
	now := o.now()
	ep := Endpoint{
		ID: ids.New("ep"), Account: spec.Account, URL: spec.URL, Events: spec.Events,
		APIVersion: spec.APIVersion, Profile: spec.Profile, Overrides: spec.Overrides,
		Managed: spec.Managed, Status: EndpointActive, CreatedAt: now,
		Headers: spec.Headers, Channels: spec.Channels, Filter: spec.Filter, RateLimit: spec.RateLimit,
	}
	if ep.Account == "" {
		return Endpoint{}, invalid("account", "required")
	}
	if ep.Profile == "" {
		ep.Profile = ProfileStandard
	}
	if len(ep.Events) == 0 {
		ep.Events = []string{"*"}
	}
	keys := spec.Secrets
	if len(keys) == 0 {
		keys = []string{webhooksig.NewSecret()}
	}
	if _, err := webhooksig.NewSigner(keys...); err != nil {
		return Endpoint{}, invalid("secrets", "%v", err)
	}
	for _, k := range keys {
		ep.Secrets = append(ep.Secrets, Secret{Key: k})
	}
	if err := o.checkEndpoint(&ep); err != nil {
		return Endpoint{}, err
	}
	if err := o.checkSubscriptions(ctx, ep.Account, ep.Events); err != nil {
		return Endpoint{}, err
	}
	audit := []AuditEntry{decide.Audit(ep, AuditCreated, "", now)}
	spec.By.stamp(audit)
	if err := o.store.CreateEndpoint(ctx, outboxdriver.CreateEndpointParams{Endpoint: ep, Audit: audit[0]}); err != nil {
		return Endpoint{}, err
	}
	return ep, nil
}

// checkEndpoint validates the writable fields of ep and sets its InFlightCap.
func (o *Outbox) checkEndpoint(ep *Endpoint) error {
	p, err := policy.Resolve(ep.Profile, ep.Overrides)
	if err != nil {
		return err
	}
	if err := policy.CheckNew(ep.Overrides); err != nil {
		return err
	}
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return invalid("url", "must be an absolute http(s) URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return invalid("url", "the %s profile allows https only: the policy override {\"allowHttp\": true} permits http", p.Profile)
	default:
		return invalid("url", "scheme %q not allowed", u.Scheme)
	}
	if u.User != nil {
		return invalid("url", "must not carry user-info")
	}
	if u.Hostname() == "" {
		return invalid("url", "has no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return invalid("url", "port %s is out of range (1-65535)", port)
		}
	}
	if len(ep.Events) > 100 {
		return invalid("events", "at most 100 types")
	}
	for _, t := range ep.Events {
		if t == "" || len(t) > maxTypeLen || !printable(t) {
			return invalid("events", "type %q must be 1 to %d visible ASCII characters", t, maxTypeLen)
		}
	}
	if len(ep.APIVersion) > 64 || !printable(ep.APIVersion) && ep.APIVersion != "" {
		return invalid("apiVersion", "at most 64 visible ASCII characters")
	}
	if ep.Headers, err = checkHeaders(ep.Headers, p.DeliveryHeader); err != nil {
		return err
	}
	if ep.Channels, err = checkChannels("channels", ep.Channels, maxEndpointChannels); err != nil {
		return err
	}
	if ep.Filter, err = checkFilter(ep.Filter); err != nil {
		return err
	}
	if ep.RateLimit < 0 || ep.RateLimit > MaxRateLimit {
		return invalid("rateLimit", "deliveries per second: 0 (none) to %d", MaxRateLimit)
	}
	ep.InFlightCap = p.MaxInFlight
	return nil
}

// GetEndpoint returns one endpoint of the account, or ErrNotFound (also for a removed
// endpoint or another account's).
func (o *Outbox) GetEndpoint(ctx context.Context, account, id string) (Endpoint, error) {
	return o.store.GetEndpoint(ctx, outboxdriver.GetEndpointParams{Account: account, ID: id})
}

// ListEndpoints returns the account's endpoints with their health.
func (o *Outbox) ListEndpoints(ctx context.Context, account string) ([]Endpoint, error) {
	return o.store.ListEndpoints(ctx, account)
}

// UpdateEndpoint changes an endpoint's URL, filter, API version, policy or keys. The next
// attempt of every delivery uses the new values. Bad input is a *ValidationError and
// changes nothing.
func (o *Outbox) UpdateEndpoint(ctx context.Context, account, id string, u EndpointUpdate) (Endpoint, error) {
	now := o.now()
	if u.Events != nil {
		if err := o.checkSubscriptions(ctx, account, *u.Events); err != nil {
			return Endpoint{}, err
		}
	}
	// The headers given are checked as given, so that an error names them so; the
	// endpoint's headers as they become are checked again with the rest.
	given := map[string]string{}
	for k, v := range u.Headers {
		if v != nil {
			given[k] = *v
		}
	}
	if _, err := checkHeaders(given, ""); err != nil {
		return Endpoint{}, err
	}
	return o.updateEndpoint(ctx, account, id, func(ep Endpoint) (outboxdriver.Change, error) {
		setGiven(&ep.URL, u.URL)
		if u.Events != nil {
			ep.Events = slices.Clone(*u.Events)
			if len(ep.Events) == 0 {
				ep.Events = []string{"*"}
			}
		}
		setGiven(&ep.APIVersion, u.APIVersion)
		setGiven(&ep.Profile, u.Profile)
		setGiven(&ep.Overrides, u.Overrides)
		setGiven(&ep.Managed, u.Managed)
		setGiven(&ep.Channels, u.Channels)
		setGiven(&ep.Filter, u.Filter)
		setGiven(&ep.RateLimit, u.RateLimit)
		if u.Headers != nil {
			ep.Headers = mergeHeaders(ep.Headers, u.Headers)
		}
		var audits []AuditEntry
		if u.Secrets != nil {
			if _, err := webhooksig.NewSigner(*u.Secrets...); err != nil || len(*u.Secrets) == 0 {
				return outboxdriver.Change{}, invalid("secrets", "want one or more whsec_ or whsk_ keys: %v", err)
			}
			ep.Secrets = nil
			for _, k := range *u.Secrets {
				ep.Secrets = append(ep.Secrets, Secret{Key: k})
			}
			audits = append(audits, decide.Audit(ep, AuditRotated, "", now))
			u.By.stamp(audits)
		}
		if err := o.checkEndpoint(&ep); err != nil {
			return outboxdriver.Change{}, err
		}
		return outboxdriver.Change{At: now, Endpoint: &ep, Audit: audits}, nil
	})
}

// RemoveEndpoint removes an endpoint: its waiting deliveries are DROPPED, an audit
// entry names by, and Config.Notify is told. Its delivery log stays readable until
// retention removes it.
func (o *Outbox) RemoveEndpoint(ctx context.Context, account, id string, by Actor) error {
	now := o.now()
	var url string
	_, err := o.updateEndpoint(ctx, account, id, func(ep Endpoint) (outboxdriver.Change, error) {
		ep.RemovedAt = &now
		url = ep.URL
		// A removed endpoint never signs nor sends again: its keys and headers
		// (credentials, often) are erased, not kept.
		ep.Secrets, ep.Headers = nil, nil
		ch := outboxdriver.Change{At: now, Endpoint: &ep, Waiting: DeliveryDropped, WaitingReason: "endpoint removed",
			Audit: []AuditEntry{decide.Audit(ep, AuditRemoved, ReasonManual, now)}}
		by.stamp(ch.Audit)
		return ch, nil
	})
	if err == nil {
		o.notify(operatorEntry(account, id, AuditRemoved, ReasonManual, by, now), url)
	}
	return err
}

// setGiven sets *dst to *v when v is given: the fields an EndpointUpdate leaves nil
// keep their value.
func setGiven[T any](dst, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Pause pauses an endpoint by operator request (reason MANUAL); its deliveries
// follow the policy's WhilePaused. The audit entry names by, and Config.Notify is
// told. Pausing a paused endpoint changes nothing; a disabled one is
// ErrEndpointDisabled.
func (o *Outbox) Pause(ctx context.Context, account, id string, by Actor) (Endpoint, error) {
	now := o.now()
	ep, paused, err := o.changeStatus(ctx, account, id, EndpointPaused, func(ep Endpoint) outboxdriver.Change {
		ch := outboxdriver.Change{At: now}
		decide.Pause(o.policyOf(ep), &ch, &ep, nil, ReasonManual, now)
		by.stamp(ch.Audit)
		ch.Endpoint = &ep
		return ch
	})
	if err == nil && paused {
		o.notify(operatorEntry(account, id, AuditPaused, ReasonManual, by, now), ep.URL)
	}
	return ep, err
}

// Resume reactivates a paused endpoint: its failure streak and hold are cleared, and
// deliveries held while it was paused are released. Deliveries that ended FAILED
// while it was paused are not resent (use Retry or Recover). A disabled endpoint
// cannot be resumed (ErrEndpointDisabled): add it again.
func (o *Outbox) Resume(ctx context.Context, account, id string, by Actor) (Endpoint, error) {
	now := o.now()
	ep, _, err := o.changeStatus(ctx, account, id, EndpointActive, func(ep Endpoint) outboxdriver.Change {
		ep.Status = EndpointActive
		ep.PausedAt, ep.PauseReason, ep.HoldUntil = nil, "", nil
		ep.Failures, ep.FailingSince = 0, nil
		audit := []AuditEntry{decide.Audit(ep, AuditResumed, "", now)}
		by.stamp(audit)
		return outboxdriver.Change{At: now, Endpoint: &ep, Audit: audit}
	})
	if err == nil {
		o.nudge()
	}
	return ep, err
}

// RotateSecret puts a new key first and lets the current ones sign beside it for
// grace (DefaultRotationGrace when 0), so every attempt in that period carries both
// signatures. The new key keeps the scheme of the endpoint's newest one: a whsec_
// secret (v1, HMAC), or a whsk_ signing key (v1a, ed25519) when that is what the
// endpoint signs with. It returns the endpoint and what the receiver verifies with
// (show it once): the whsec_ secret, or the whpk_ public key of the new signing key.
// The audit entry names by. A negative grace is invalid.
func (o *Outbox) RotateSecret(ctx context.Context, account, id string, grace time.Duration, by Actor) (Endpoint, string, error) {
	return o.rotateSecret(ctx, account, id, grace, by, func(ep Endpoint) (string, string) {
		if len(ep.Secrets) > 0 && strings.HasPrefix(ep.Secrets[0].Key, webhooksig.SigningKeyPrefix) {
			return webhooksig.NewKeyPair()
		}
		key := webhooksig.NewSecret()
		return key, key
	})
}

// RotateSecretTo is RotateSecret to a key the caller chose: a whsec_ secret, or a
// whsk_ signing key, whose whpk_ public key it returns to show (for a secret, the
// secret). A key that is neither, or malformed, is a *ValidationError naming
// "secret". A node's status hook endpoints sign with a secret derived from the
// account's webhook secret, and follow its rotation.
func (o *Outbox) RotateSecretTo(ctx context.Context, account, id, key string, grace time.Duration, by Actor) (Endpoint, string, error) {
	shown, err := VerifyingKey(key)
	if err != nil {
		return Endpoint{}, "", err
	}
	return o.rotateSecret(ctx, account, id, grace, by, func(Endpoint) (string, string) { return key, shown })
}

// VerifyingKey is what a receiver verifies the signatures of key with: a whsec_
// secret itself, or the whpk_ public key of a whsk_ signing key. Any other key is a
// *ValidationError naming "secret".
func VerifyingKey(key string) (string, error) {
	switch webhooksig.KindOf(key) {
	case webhooksig.KindSecret:
		if _, err := webhooksig.ParseSecret(key); err != nil {
			return "", invalid("secret", "%v", err)
		}
		return key, nil
	case webhooksig.KindSigningKey:
		k, err := webhooksig.ParseSigningKey(key)
		if err != nil {
			return "", invalid("secret", "%v", err)
		}
		return k.Public().Encode(), nil
	case webhooksig.KindPublicKey:
		return "", invalid("secret", "a whpk_ public key only verifies: give the whsk_ signing key, the receiver gets its whpk_ key")
	}
	return "", invalid("secret", "want a whsec_ secret (v1, HMAC-SHA256) or a whsk_ ed25519 signing key (v1a)")
}

// mergeHeaders is h with each header of set given its value, or removed for nil.
func mergeHeaders(h map[string]string, set map[string]*string) map[string]string {
	out := make(map[string]string, len(h)+len(set))
	for k, v := range h {
		out[k] = v
	}
	for k, v := range set {
		canon := textproto.CanonicalMIMEHeaderKey(k)
		if !headerToken(k) {
			canon = k // kept as given, for checkHeaders to refuse by its name
		}
		delete(out, canon)
		if v != nil {
			out[canon] = *v
		}
	}
	return out
}

func (o *Outbox) rotateSecret(ctx context.Context, account, id string, grace time.Duration, by Actor, newKey func(Endpoint) (key, shown string)) (Endpoint, string, error) {
	if grace < 0 {
		return Endpoint{}, "", invalid("grace", "must not be negative, got %s", grace)
	}
	if grace == 0 {
		grace = DefaultRotationGrace
	}
	now := o.now()
	var shown string
	ep, err := o.updateEndpoint(ctx, account, id, func(ep Endpoint) (outboxdriver.Change, error) {
		var key string
		key, shown = newKey(ep)
		until := now.Add(grace)
		kept := []Secret{{Key: key}}
		for _, s := range ep.Secrets {
			if s.ExpiresAt != nil && !now.Before(*s.ExpiresAt) || s.Key == key {
				continue
			}
			if s.ExpiresAt == nil || s.ExpiresAt.After(until) {
				s.ExpiresAt = &until
			}
			kept = append(kept, s)
		}
		ep.Secrets = kept
		audit := []AuditEntry{decide.Audit(ep, AuditRotated, "", now)}
		by.stamp(audit)
		return outboxdriver.Change{At: now, Endpoint: &ep, Audit: audit}, nil
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return ep, shown, nil
}

// operatorEntry is the audit entry of an operator's change, as Config.Notify is
// shown it.
func operatorEntry(account, id, action, reason string, by Actor, now time.Time) AuditEntry {
	e := []AuditEntry{{Account: account, EndpointID: id, Action: action, Reason: reason, At: now}}
	by.stamp(e)
	return e[0]
}

// updateEndpoint applies change to endpoint id of account in one transaction.
func (o *Outbox) updateEndpoint(ctx context.Context, account, id string, change outboxdriver.ChangeFunc) (Endpoint, error) {
	return o.store.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: account, ID: id, Change: change})
}

// changeStatus changes the endpoint with change on the way to status: a disabled
// endpoint refuses (ErrEndpointDisabled), and one already at status changes nothing.
// changed reports whether change ran in the run the store applied.
func (o *Outbox) changeStatus(ctx context.Context, account, id string, status EndpointStatus, change func(ep Endpoint) outboxdriver.Change) (ep Endpoint, changed bool, err error) {
	ep, err = o.updateEndpoint(ctx, account, id, func(ep Endpoint) (outboxdriver.Change, error) {
		changed = false // a retried transaction runs this again
		switch ep.Status {
		case EndpointDisabled:
			return outboxdriver.Change{}, ErrEndpointDisabled
		case status:
			return outboxdriver.Change{}, nil
		}
		changed = true
		return change(ep), nil
	})
	return ep, changed, err
}
