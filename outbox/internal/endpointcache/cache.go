package endpointcache

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// maxEntries bounds a cache: past it, the cache starts again empty. A node's hot
// endpoints fill it again in one claim each.
const maxEntries = 10_000

// Cache maps an endpoint id to its JSON columns as last read, decoded. It is safe for
// concurrent use. The zero value is ready.
type Cache struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	events, secrets, overrides string
	decoded                    Decoded
}

// Decoded is an endpoint's JSON columns, decoded.
type Decoded struct {
	Events    []string
	Secrets   []outboxdriver.Secret
	Overrides outboxdriver.Overrides
}

// Decode returns the columns of endpoint id decoded, from c when they are the text
// it decoded last for id. The slices returned are the caller's own; the pointer
// fields of Overrides (and Secrets' expiry times) are shared between callers, as the
// engine never writes through them. what names the store in errors.
func Decode[T ~string | ~[]byte](c *Cache, what, id string, events, secrets, overrides T) (Decoded, error) {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if !ok || e.events != string(events) || e.secrets != string(secrets) || e.overrides != string(overrides) {
		var err error
		if e, err = decode(what, id, events, secrets, overrides); err != nil {
			return Decoded{}, err
		}
		c.mu.Lock()
		if c.m == nil || len(c.m) >= maxEntries {
			c.m = make(map[string]*entry)
		}
		c.m[id] = e
		c.mu.Unlock()
	}
	d := e.decoded
	d.Events, d.Secrets = slices.Clone(d.Events), slices.Clone(d.Secrets)
	return d, nil
}

func decode[T ~string | ~[]byte](what, id string, events, secrets, overrides T) (*entry, error) {
	e := &entry{events: string(events), secrets: string(secrets), overrides: string(overrides)}
	if err := json.Unmarshal([]byte(events), &e.decoded.Events); err != nil {
		return nil, fmt.Errorf("%s: endpoint %s events: %w", what, id, err)
	}
	if err := json.Unmarshal([]byte(secrets), &e.decoded.Secrets); err != nil {
		return nil, fmt.Errorf("%s: endpoint %s secrets: %w", what, id, err)
	}
	if err := json.Unmarshal([]byte(overrides), &e.decoded.Overrides); err != nil {
		return nil, fmt.Errorf("%s: endpoint %s overrides: %w", what, id, err)
	}
	return e, nil
}
