// Package endpointcache keeps the decoded JSON columns of endpoints (event filter,
// secrets, policy overrides) for the stores, so that a claim, a publish or a batch of
// outcomes reading an endpoint's row decodes those columns only when their text
// changed since it last read them (docs/outbox.md §5, "Claiming"). The text is the
// key, so the cache needs no invalidation: whatever writes an endpoint (this process,
// another, another node), the next read sees its new text and decodes it.
package endpointcache
