package outbox

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// SecretSealer keeps the endpoints' signing keys and header values (which may be
// credentials) encrypted at rest (Config.Secrets): the outbox seals each before
// the store writes it, bound to where it is kept, and opens it when the store reads
// it back. A node's is the
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

// whereKeys is the place of an endpoint's signing keys; whereHeader of the value
// of one of its headers (which may be a credential).
func whereKeys(ep Endpoint) string { return "outbox_endpoints.secrets:" + ep.ID }

func whereHeader(ep Endpoint, name string) string {
	return "outbox_endpoints.headers:" + ep.ID + ":" + name
}

// sealKeys returns ep's signing keys sealed.
func sealKeys(box SecretSealer, ep Endpoint) ([]Secret, error) {
	if len(ep.Secrets) == 0 {
		return ep.Secrets, nil
	}
	sealed := make([]Secret, len(ep.Secrets))
	for i, s := range ep.Secrets {
		k, err := box.Seal(s.Key, whereKeys(ep))
		if err != nil {
			return nil, fmt.Errorf("sealing the keys of endpoint %s: %w", ep.ID, err)
		}
		sealed[i] = Secret{Key: k, ExpiresAt: s.ExpiresAt}
	}
	return sealed, nil
}

// sealHeaders returns the values of ep's headers sealed.
func sealHeaders(box SecretSealer, ep Endpoint) (map[string]string, error) {
	if len(ep.Headers) == 0 {
		return ep.Headers, nil
	}
	sealed := make(map[string]string, len(ep.Headers))
	for name, v := range ep.Headers {
		s, err := box.Seal(v, whereHeader(ep, name))
		if err != nil {
			return nil, fmt.Errorf("sealing the headers of endpoint %s: %w", ep.ID, err)
		}
		sealed[name] = s
	}
	return sealed, nil
}

// inClear reports whether box keeps secrets as they are: then there is nothing to
// seal or open, and the store's endpoints pass as they are.
func inClear(box SecretSealer) bool {
	_, ok := box.(clearSecrets)
	return ok
}

// sealEndpoint returns ep with its signing keys and header values sealed.
func sealEndpoint(box SecretSealer, ep Endpoint) (Endpoint, error) {
	if inClear(box) {
		return ep, nil
	}
	keys, err := sealKeys(box, ep)
	if err != nil {
		return ep, err
	}
	headers, err := sealHeaders(box, ep)
	if err != nil {
		return ep, err
	}
	ep.Secrets, ep.Headers = keys, headers
	return ep, nil
}

// openEndpoint returns ep, as stored, with its signing keys and header values
// opened.
func openEndpoint(box SecretSealer, ep Endpoint) (Endpoint, error) {
	if inClear(box) {
		return ep, nil
	}
	if len(ep.Secrets) > 0 {
		opened := make([]Secret, len(ep.Secrets))
		for i, s := range ep.Secrets {
			k, err := box.Open(s.Key, whereKeys(ep))
			if err != nil {
				return ep, fmt.Errorf("the signing keys of endpoint %s: %w (is the secrets key set?)", ep.ID, err)
			}
			opened[i] = Secret{Key: k, ExpiresAt: s.ExpiresAt}
		}
		ep.Secrets = opened
	}
	if len(ep.Headers) > 0 {
		opened := make(map[string]string, len(ep.Headers))
		for name, v := range ep.Headers {
			o, err := box.Open(v, whereHeader(ep, name))
			if err != nil {
				return ep, fmt.Errorf("the headers of endpoint %s: %w (is the secrets key set?)", ep.ID, err)
			}
			opened[name] = o
		}
		ep.Headers = opened
	}
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

// sealedChange runs a decision on the endpoint with its secrets opened and seals
// the endpoint it changes; secrets it left as they were keep their stored form (no
// write of new ciphertext for an unchanged key or header).
func sealedChange(box SecretSealer, stored Endpoint, decide func(Endpoint) (outboxdriver.Change, error)) (outboxdriver.Change, error) {
	if inClear(box) {
		return decide(stored)
	}
	opened, err := openEndpoint(box, stored)
	if err != nil {
		return outboxdriver.Change{}, err
	}
	ch, err := decide(opened)
	if err != nil || ch.Endpoint == nil {
		return ch, err
	}
	out := *ch.Endpoint
	same := out.ID == stored.ID
	if same && slices.Equal(out.Secrets, opened.Secrets) {
		out.Secrets = stored.Secrets
	} else if out.Secrets, err = sealKeys(box, out); err != nil {
		return outboxdriver.Change{}, err
	}
	if same && maps.Equal(out.Headers, opened.Headers) {
		out.Headers = stored.Headers
	} else if out.Headers, err = sealHeaders(box, out); err != nil {
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
			if len(ep.Secrets) == 0 && len(ep.Headers) == 0 {
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
