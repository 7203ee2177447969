// Package metrics holds a node's Prometheus metrics: calls, hook attempts and
// retries, WebSocket reconnects, alerts, outbox deliveries and the outbox store's
// writer, on a registry of their own so that several nodes (tests) can live in one
// process.
//
// It counts what it is told (a call's timeline events, an outbox attempt, a store's
// figures); it neither serves the registry (the node mounts it at /metrics) nor
// decides anything.
package metrics
