// Package outbox delivers events to subscriber endpoints durably, at least once, with
// retries that survive crashes (docs/outbox.md §1, §2, §3 and §5).
//
// A program opens an Outbox on a store (package outbox/sqlitestore for the embedded
// SQLite database), registers Endpoints, and publishes Events with Publish, or with
// PublishTx inside its own database transaction so that a rolled-back change sends
// nothing. Each event becomes one Delivery per matching endpoint. After Start, the
// outbox claims due deliveries in batches with a lease, makes one HTTP attempt per
// claim through the egress-checked client of package transport, records the Attempt,
// and decides with package retry and the endpoint's policy what follows. The outbox
// builds each attempt's request whole (docs/outbox.md §7): the body (Config.Renderer)
// as a POST, which the embedding program's Config.Request hook may make a GET with
// the fields in the query, give Basic auth or headers of its own (another signature
// over the bytes sent); then the Standard Webhooks signature over exactly what is
// sent. Nothing rewrites its requests afterwards. Config.Workers attempts run at
// once; a node holds up to
// Workers+BatchSize leases, so that claimed deliveries wait in memory for a worker and
// finished ones for the single writer, which records and claims in the same
// transaction. While a worker is idle, Publish leases its deliveries as it stores them
// and hands them over directly, without a claim. A reaper reclaims expired leases and
// a purge removes rows older than the retention window.
//
// Behaviour is data: a policy per endpoint, built from one of the four profiles
// (ProfileSajn, ProfileDigize, ProfileLucibook, ProfileStandard) and per-endpoint
// Overrides. Scheduled deliveries are rows and an index: no goroutine or timer exists
// per waiting delivery.
//
// Every method that takes a context returns its error, wrapped, when the context ends
// first, and changes nothing then; every other error wraps one of the sentinels
// (ErrNotFound, ErrInvalid, ErrUnavailable, ...), to be tested with errors.Is.
//
// The package owns durable delivery and its policy; it does not know about calls or
// verbs, does not dial by itself (transport does), and does not serve HTTP. Its
// machinery lives under outbox/internal (policy, decisions, the dispatcher). Stores
// implement the interface of package outboxdriver, the seam apart from this API, and
// pass the shared suite of package outbox/outboxtest.
package outbox
