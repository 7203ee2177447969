package outbox

import (
	"context"
	"database/sql"
	"time"
)

// Store keeps events, endpoints, deliveries, attempts and the audit log. It is the
// seam between the engine and a database: the SQLite store (outbox/sqlitestore) and
// the PostgreSQL store implement it and pass the same suite (outbox/outboxtest).
//
// A store holds no policy. Where a write depends on the current state of a row (a
// delivery's outcome on its endpoint's health, a fan-out on endpoint status), the store
// reads the rows inside its transaction and calls back into the engine, which returns
// a Change; the store applies it in the same transaction. Time is always a parameter,
// so tests pin it.
//
// Every method returns an error wrapping ErrNotFound for a missing or removed row, and
// never changes anything when it returns an error.
type Store interface {
	// CreateEndpoint inserts ep (ID, Account and URL set by the caller) and audit.
	CreateEndpoint(ctx context.Context, ep Endpoint, audit AuditEntry) error
	// GetEndpoint returns one endpoint of the account that is not removed.
	GetEndpoint(ctx context.Context, account, id string) (Endpoint, error)
	// ListEndpoints returns the account's endpoints that are not removed, oldest first.
	ListEndpoints(ctx context.Context, account string) ([]Endpoint, error)
	// UpdateEndpoint reads the endpoint and applies the Change change returns, in one
	// transaction. An error from change aborts with nothing written.
	UpdateEndpoint(ctx context.Context, account, id string, change func(Endpoint) (Change, error)) (Endpoint, error)

	// Publish stores ev and, for every endpoint of ev.Account that is not removed, the
	// delivery plan returns (none when ok is false; plan applies the type filter),
	// in one transaction: tx when it is not nil (the caller commits), otherwise the
	// store's own. When an event with ev.ID exists in the same account it returns that
	// event and its deliveries with Duplicate set and writes nothing; in another
	// account, or with other content, it fails with ErrConflict. now is the time of
	// storing, from which retention counts.
	Publish(ctx context.Context, tx *sql.Tx, ev Event, now time.Time, plan PlanFunc) (Published, error)
	// GetEvent returns one event of the account.
	GetEvent(ctx context.Context, account, id string) (Event, error)
	// ListEvents returns the account's events, oldest first.
	ListEvents(ctx context.Context, q EventQuery) ([]Event, error)

	// Claim leases up to p.Limit due deliveries atomically (one statement, or one
	// transaction that holds the write lock from its start): PENDING, unleased,
	// NextAttemptAt <= p.Now, on ACTIVE endpoints that are not held at p.Now, without
	// exceeding any endpoint's InFlightCap counting the leases it already has. Each
	// claimed delivery gets LeaseUntil and Token.
	Claim(ctx context.Context, p ClaimParams) ([]Job, error)
	// NextDue returns the earliest NextAttemptAt among unleased PENDING deliveries.
	NextDue(ctx context.Context) (time.Time, bool, error)
	// Complete applies outcomes in one transaction. For each one whose delivery still
	// carries its lease token, it reads the delivery and its endpoint and applies the
	// Change decide returns; an outcome whose lease was lost (reaped) is skipped and
	// reported false in the result.
	Complete(ctx context.Context, outcomes []Completion) ([]bool, error)
	// CompleteClaim is Complete and then, when next.Limit > 0, Claim(next), in one
	// transaction: the claim counts the leases the outcomes released, and one commit
	// serves both. On error nothing is written and nothing is claimed.
	CompleteClaim(ctx context.Context, outcomes []Completion, next ClaimParams) ([]bool, []Job, error)
	// Reap finds up to limit PENDING deliveries whose lease expired before now and
	// applies the Change decide returns for each. It returns how many it reaped.
	Reap(ctx context.Context, now time.Time, limit int, decide DecideFunc) (int, error)

	// UpdateDelivery reads the delivery and its endpoint and applies change's Change
	// in one transaction (manual retry).
	UpdateDelivery(ctx context.Context, account, id string, change DecideFunc) (Delivery, error)
	// Recover makes every FAILED delivery of the endpoint created at or after since
	// PENDING again, due at now, with a fresh attempt budget (RunStart = Attempts).
	Recover(ctx context.Context, account, endpointID string, since, now time.Time) (int, error)
	// GetDelivery returns one delivery of the account with its attempts, oldest first.
	GetDelivery(ctx context.Context, account, id string) (Delivery, []Attempt, error)
	// ListDeliveries returns deliveries, newest first.
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error)
	// ListAudit returns the account's audit log, newest first.
	ListAudit(ctx context.Context, account string, limit int) ([]AuditEntry, error)

	// Purge deletes up to limit deliveries (with their attempts) created before
	// before and not leased, then up to limit events created before before that no
	// delivery refers to. It returns how many rows of each it deleted.
	Purge(ctx context.Context, before time.Time, limit int) (deliveries, events int, err error)
}

// PlanFunc decides the delivery of a new event to one endpoint: ok false creates none;
// attempt, when not nil, is written with it (attempt 0 of a paused endpoint).
//
// A PENDING d with LeaseUntil set asks to be leased as it is stored, with the token
// PublishLeaseToken(d.ID): the store grants it when the endpoint is ACTIVE, not held
// at the time of storing, and under its InFlightCap counting the leases it already
// has (those granted earlier in the same transaction included), and otherwise stores
// the delivery unleased, LeaseUntil nil in the Published result. The engine hands a
// granted delivery straight to its workers, with no claim.
type PlanFunc func(ep Endpoint) (d Delivery, attempt *Attempt, ok bool)

// PublishLeaseToken is the lease token of a delivery leased as it was published. A
// delivery is published once, so the token is unique among its leases; claims use
// random tokens.
func PublishLeaseToken(deliveryID string) string { return "pub_" + deliveryID }

// DecideFunc returns the Change to apply to a delivery given its current state and its
// endpoint's. An error aborts the transaction.
type DecideFunc func(d Delivery, ep Endpoint) (Change, error)

// Change is what a decision writes, applied in one transaction.
type Change struct {
	// Delivery, when not nil, replaces the delivery's mutable fields (status, attempts,
	// run start, next attempt, fault since, last error, updated time); its lease is
	// cleared.
	Delivery *Delivery
	// Attempt, when not nil, is inserted.
	Attempt *Attempt
	// Endpoint, when not nil, replaces the endpoint's mutable fields: URL, events, API
	// version, secrets, profile, overrides, managed, status, health and InFlightCap.
	// A RemovedAt set removes it: it disappears from reads and fan-out.
	Endpoint *Endpoint
	// At is when the change happens: the updated time of the waiting deliveries it
	// moves (Waiting). The delivery it rewrites takes Delivery.UpdatedAt.
	At time.Time
	// Waiting, when set, gives every other unleased PENDING delivery of the endpoint
	// this status (DROPPED when disabled or removed, FAILED when paused under
	// PausedFail), with WaitingReason as their last error.
	Waiting       DeliveryStatus
	WaitingReason string
	// Audit entries are appended.
	Audit []AuditEntry
}

// Published is the result of Publish.
type Published struct {
	Event      Event
	Deliveries []Delivery
	// Duplicate is true when the event id existed: nothing was written.
	Duplicate bool
}

// ClaimParams are the inputs of Claim.
type ClaimParams struct {
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// Token marks the leases of this claim; Complete matches it.
	Token string
}

// Job is one claimed delivery with what its attempt needs.
type Job struct {
	Delivery Delivery
	Event    Event
	Endpoint Endpoint
	Token    string
	// claimedAt is when the dispatcher asked the store for the job (its monotonic
	// clock): a job claimed before the node learned that its endpoint stopped
	// taking deliveries is released unsent (dispatcher.stopped).
	claimedAt time.Time
}

// Completion is the outcome of one claimed delivery.
type Completion struct {
	DeliveryID string
	Token      string
	Decide     DecideFunc
}

// EventQuery selects events.
type EventQuery struct {
	Account string
	// Since keeps events created at or after it (zero: all).
	Since time.Time
	Type  string
	// AfterID continues a listing after that event (cursor).
	AfterID string
	Limit   int
}

// DeliveryQuery selects deliveries of an account.
type DeliveryQuery struct {
	Account    string
	EndpointID string
	EventID    string
	Type       string
	Status     DeliveryStatus
	// BeforeID continues a listing after that delivery (cursor, newest first).
	BeforeID string
	Limit    int
}
