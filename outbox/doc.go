// Package outbox delivers events to subscriber endpoints durably, at least once, with
// retries that survive crashes (OUTBOX.md sections 1, 2, 3 and 5).
//
// A program opens an Outbox on a Store (package outbox/sqlitestore for the embedded
// SQLite database), registers Endpoints, and publishes Events with Publish, or with
// PublishTx inside its own transaction so that a rolled-back change sends nothing. Each
// event becomes one Delivery per matching endpoint. After Start, the Dispatcher claims
// due deliveries in batches with a lease, makes one HTTP attempt per claim through the
// egress-checked client of package transport, records the Attempt, and decides with
// package retry and the endpoint's Policy what follows. Config.Workers attempts run at
// once; a node holds up to Workers+BatchSize leases, so that claimed deliveries wait in
// memory for a worker and finished ones for the single writer, which records and claims
// in the same transaction. While a worker is idle, Publish leases its deliveries as
// it stores them and hands them over directly, without a claim. A Reaper reclaims
// expired leases and a purge removes rows older than the retention window. Package
// outbox/outboxbench measures delivery against a plain HTTP client (`switchboard
// bench outbox`).
//
// Behaviour is data: a Policy per endpoint, built from one of the four profiles
// (ProfileSajn, ProfileDigize, ProfileLucibook, ProfileStandard) and per-endpoint
// Overrides. Scheduled deliveries are rows and an index: no goroutine or timer exists
// per waiting delivery.
//
// The package owns durable delivery and its policy; it does not know about calls or
// verbs, does not dial by itself (transport does), and does not serve HTTP (the REST
// handlers live beside it in a later package). Stores implement the interface of
// package outboxdriver, the seam apart from this API, and must pass the shared suite
// in package outbox/outboxtest.
package outbox
