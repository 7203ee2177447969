// Package ids makes the outbox's identifiers: events, endpoints, deliveries and lease
// tokens, each a type prefix and 16 bytes (time first, then randomness) in hex.
package ids
