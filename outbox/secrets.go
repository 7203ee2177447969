package outbox

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// SecretSealer keeps the endpoints' signing keys encrypted at rest
// (Config.Secrets): the outbox seals every key before the store writes it, bound to
// where it is kept, and opens it when the store reads it back. A node's is the
// operator's key ring (SWITCHBOARD_SECRETS_KEY).
type SecretSealer interface {
	// Seal returns plain sealed, bound to where; Open returns the secret stored at
	// where, a value stored in clear as it is, or an error when it cannot (no key,
	// another key, a damaged or moved value).
	Seal(plain, where string) (string, error)
	Open(stored, where string) (string, error)
}

// clearSecrets is the default SecretSealer: keys are stored as they are.
type clearSecrets struct{}

func (clearSecrets) Seal(plain, _ string) (string, error)  { return plain, nil }
func (clearSecrets) Open(stored, _ string) (string, error) { return stored, nil }

// whereKeys is the place of an endpoint's signing keys.
func whereKeys(ep Endpoint) string { return "outbox_endpoints.secrets:" + ep.ID }

// sealEndpoint returns ep with its keys sealed.
func sealEndpoint(box SecretSealer, ep Endpoint) (Endpoint, error) {
	if len(ep.Secrets) == 0 {
		return ep, nil
	}
	sealed := make([]Secret, len(ep.Secrets))
	for i, s := range ep.Secrets {
		k, err := box.Seal(s.Key, whereKeys(ep))
		if err != nil {
			return ep, fmt.Errorf("sealing the keys of endpoint %s: %w", ep.ID, err)
		}
		sealed[i] = Secret{Key: k, ExpiresAt: s.ExpiresAt}
	}
	ep.Secrets = sealed
	return ep, nil
}

// openEndpoint returns ep, as stored, with its keys opened.
func openEndpoint(box SecretSealer, ep Endpoint) (Endpoint, error) {
	if len(ep.Secrets) == 0 {
		return ep, nil
	}
	opened := make([]Secret, len(ep.Secrets))
	for i, s := range ep.Secrets {
		k, err := box.Open(s.Key, whereKeys(ep))
		if err != nil {
			return ep, fmt.Errorf("the signing keys of endpoint %s: %w (is the secrets key set?)", ep.ID, err)
		}
		opened[i] = Secret{Key: k, ExpiresAt: s.ExpiresAt}
	}
	ep.Secrets = opened
	return ep, nil
}

// openJobs opens the keys of each job's endpoint.
func openJobs(box SecretSealer, jobs []outboxdriver.Job, err error) ([]outboxdriver.Job, error) {
	if err != nil {
		return jobs, err
	}
	for i := range jobs {
		if jobs[i].Endpoint, err = openEndpoint(box, jobs[i].Endpoint); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// sealedChange runs a decision on the endpoint with its keys opened and seals the
// endpoint it changes; keys it left as they were keep their stored form (no write
// of new ciphertext for an unchanged key).
func sealedChange(box SecretSealer, stored Endpoint, decide func(Endpoint) (outboxdriver.Change, error)) (outboxdriver.Change, error) {
	opened, err := openEndpoint(box, stored)
	if err != nil {
		return outboxdriver.Change{}, err
	}
	ch, err := decide(opened)
	if err != nil || ch.Endpoint == nil {
		return ch, err
	}
	out := *ch.Endpoint
	if out.ID == stored.ID && slices.Equal(out.Secrets, opened.Secrets) {
		out.Secrets = stored.Secrets
	} else if out, err = sealEndpoint(box, out); err != nil {
		return outboxdriver.Change{}, err
	}
	ch.Endpoint = &out
	return ch, nil
}

// ResealSecrets writes the signing keys of every endpoint (not removed) of the
// accounts again, sealed as Config.Secrets seals now (after a new key was put first,
// under it), and returns how many endpoints it rewrote.
func (o *Outbox) ResealSecrets(ctx context.Context, accounts []string) (int, error) {
	n := 0
	for _, account := range accounts {
		eps, err := o.store.ListEndpoints(ctx, account)
		if err != nil {
			return n, err
		}
		for _, ep := range eps {
			if len(ep.Secrets) == 0 {
				continue
			}
			_, err := o.cfg.Store.UpdateEndpoint(ctx, outboxdriver.UpdateEndpointParams{Account: account, ID: ep.ID, Change: func(stored Endpoint) (outboxdriver.Change, error) {
				opened, err := openEndpoint(o.cfg.Secrets, stored)
				if err != nil {
					return outboxdriver.Change{}, err
				}
				resealed, err := sealEndpoint(o.cfg.Secrets, opened)
				return outboxdriver.Change{At: o.now(), Endpoint: &resealed}, err
			}})
			if err != nil {
				return n, storeErr(err)
			}
			n++
		}
	}
	return n, nil
}
