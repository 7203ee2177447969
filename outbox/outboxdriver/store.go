package outboxdriver

import (
	"context"
	"encoding/json"
	"time"
)

// Store keeps events, endpoints, deliveries, attempts and the audit log. The SQLite
// store (outbox/sqlitestore) and the PostgreSQL store implement it and pass the same
// suite (outbox/outboxtest).
//
// A store holds no policy. Where a write depends on the current state of a row (a
// delivery's outcome on its endpoint's health, a fan-out on endpoint status), the store
// reads the rows inside its transaction and calls back into the engine (PlanFunc,
// ChangeFunc, DecideFunc), which returns a Change; the store applies it in the same
// transaction. Time is always a parameter, so tests pin it.
//
// Every method returns an error wrapping ErrNotFound for a missing or removed row, and
// never changes anything when it returns an error. When ctx ends before the work is
// done, the method returns ctx's error (wrapped or not) and nothing it would have
// written is kept.
type Store interface {
	// CreateEndpoint inserts p.Endpoint (ID, Account and URL set by the caller) and
	// p.Audit. An endpoint with that ID already is ErrConflict.
	CreateEndpoint(ctx context.Context, p CreateEndpointParams) error
	// GetEndpoint returns one endpoint of the account that is not removed.
	GetEndpoint(ctx context.Context, p GetEndpointParams) (Endpoint, error)
	// ListEndpoints returns the account's endpoints that are not removed, oldest first.
	ListEndpoints(ctx context.Context, account string) ([]Endpoint, error)
	// UpdateEndpoint reads the endpoint and applies the Change p.Change returns, in one
	// transaction, and returns the endpoint as stored after it. An error from p.Change
	// aborts with nothing written and is returned as it is.
	UpdateEndpoint(ctx context.Context, p UpdateEndpointParams) (Endpoint, error)

	// Publish stores p.Event and, for every endpoint of its account that is not
	// removed, the delivery p.Plan returns (none when ok is false; Plan applies the
	// type filter), in one transaction: p.Tx when it is not nil (the caller commits),
	// otherwise the store's own. Event IDs are unique per account: the same ID in
	// another account is another event. When an event with that ID exists in the
	// account it returns that event and its deliveries with Duplicate set and writes
	// nothing; with other content it fails with ErrConflict.
	Publish(ctx context.Context, p PublishParams) (Published, error)
	// GetEvent returns one event of the account.
	GetEvent(ctx context.Context, p GetEventParams) (Event, error)
	// ListEvents returns the account's events, oldest first.
	ListEvents(ctx context.Context, q EventQuery) ([]Event, error)

	// Claim leases up to p.Limit due deliveries atomically (one statement, or one
	// transaction that holds the write lock from its start): PENDING, unleased,
	// NextAttemptAt <= p.Now, on ACTIVE endpoints that are not held at p.Now, without
	// exceeding any endpoint's InFlightCap counting the leases it already has, nor the
	// room of its RateLimit at p.Now (RateRoom), whose bucket it then takes them from
	// (RateAfter). Each claimed delivery gets LeaseUntil and Token.
	Claim(ctx context.Context, p ClaimParams) ([]Job, error)
	// NextDue returns the earliest NextAttemptAt among unleased PENDING deliveries, and
	// false when there is none.
	NextDue(ctx context.Context) (time.Time, bool, error)
	// Complete applies outcomes in one transaction. For each one whose delivery still
	// carries its lease token, it reads the delivery and its endpoint and applies the
	// Change Decide returns, as if the outcomes were applied one after the other; an
	// outcome whose lease was lost (reaped) is skipped and reported false in the result.
	Complete(ctx context.Context, outcomes []Completion) ([]bool, error)
	// CompleteClaim is Complete(p.Outcomes) and then, when p.Next.Limit > 0,
	// Claim(p.Next), in one transaction: the claim counts the leases the outcomes
	// released, and one commit serves both. On error nothing is written and nothing is
	// claimed.
	CompleteClaim(ctx context.Context, p CompleteClaimParams) ([]bool, []Job, error)
	// Reap finds up to p.Limit PENDING deliveries whose lease expired before p.Now and
	// applies the Change p.Decide returns for each. It returns how many it reaped.
	Reap(ctx context.Context, p ReapParams) (int, error)

	// UpdateDelivery reads the delivery and its endpoint and applies the Change
	// p.Decide returns in one transaction (manual retry), and returns the delivery as
	// stored after it. An error from p.Decide aborts with nothing written and is
	// returned as it is.
	UpdateDelivery(ctx context.Context, p UpdateDeliveryParams) (Delivery, error)
	// Recover makes every FAILED delivery of the endpoint created at or after p.Since
	// PENDING again, due at p.Now, with a fresh attempt budget (RunStart = Attempts),
	// and returns how many. It writes p.Audit, when not nil, in the same transaction,
	// its Count set to that number.
	Recover(ctx context.Context, p RecoverParams) (int, error)
	// GetDelivery returns one delivery of the account with its attempts, oldest first.
	GetDelivery(ctx context.Context, p GetDeliveryParams) (Delivery, []Attempt, error)
	// ListDeliveries returns deliveries, newest first.
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error)
	// ListAudit returns the account's audit log, newest first (by ID, descending).
	ListAudit(ctx context.Context, p ListAuditParams) ([]AuditEntry, error)

	// Purge deletes up to p.Limit deliveries (with their attempts) created before
	// p.Before and not leased, then up to p.Limit events stored before p.Before that no
	// delivery refers to, and up to p.Limit idempotency keys stored before
	// p.KeysBefore. It returns how many deliveries and events it deleted.
	Purge(ctx context.Context, p PurgeParams) (deliveries, events int, err error)

	// CreateEventType inserts t into its account's catalog; a name that exists there
	// (archived or not) is ErrConflict.
	CreateEventType(ctx context.Context, t EventType) error
	// GetEventType returns one event type of the account, archived or not.
	GetEventType(ctx context.Context, p GetEventTypeParams) (EventType, error)
	// ListEventTypes returns the account's event types by name.
	ListEventTypes(ctx context.Context, p ListEventTypesParams) ([]EventType, error)
	// UpdateEventType reads the event type and stores what p.Change returns (its
	// description, schema, archived time and updated time), in one transaction, and
	// returns it as stored. An error from p.Change aborts with nothing written.
	UpdateEventType(ctx context.Context, p UpdateEventTypeParams) (EventType, error)
	// GetCatalog returns the account's catalog settings (the zero Catalog, with the
	// account set, when it has none).
	GetCatalog(ctx context.Context, account string) (Catalog, error)
	// SetCatalog stores the account's catalog settings.
	SetCatalog(ctx context.Context, c Catalog) error
}

// EventType is an entry of an account's event-type catalog (docs/outbox.md §1).
type EventType struct {
	Account string `json:"account"`
	// Name is the event type, as events carry it.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Schema, when not empty, is the JSON Schema every published event's data of
	// this type must pass.
	Schema json.RawMessage `json:"schema,omitempty"`
	// ArchivedAt, when set, retires the type: a strict catalog no longer lets
	// endpoints subscribe to it; events of it are still checked and delivered.
	ArchivedAt *time.Time `json:"archivedAt,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
}

// Catalog is an account's settings of its event-type catalog.
type Catalog struct {
	Account string `json:"account"`
	// Strict lets endpoints subscribe only to the catalog's types that are not
	// archived (or to every type, "*").
	Strict bool `json:"strict"`
}

// GetEventTypeParams are the inputs of Store.GetEventType.
type GetEventTypeParams struct {
	Account string
	Name    string
}

// ListEventTypesParams are the inputs of Store.ListEventTypes.
type ListEventTypesParams struct {
	Account string
	// IncludeArchived lists archived types too.
	IncludeArchived bool
	// AfterName continues a listing after that name (cursor).
	AfterName string
	Limit     int
}

// UpdateEventTypeParams are the inputs of Store.UpdateEventType.
type UpdateEventTypeParams struct {
	Account string
	Name    string
	Change  func(t EventType) (EventType, error)
}

// CreateEndpointParams are the inputs of Store.CreateEndpoint.
type CreateEndpointParams struct {
	Endpoint Endpoint
	// Audit is written with the endpoint (its creation).
	Audit AuditEntry
}

// GetEndpointParams are the inputs of Store.GetEndpoint.
type GetEndpointParams struct {
	Account string
	ID      string
}

// UpdateEndpointParams are the inputs of Store.UpdateEndpoint.
type UpdateEndpointParams struct {
	Account string
	ID      string
	Change  ChangeFunc
}

// PublishParams are the inputs of Store.Publish.
type PublishParams struct {
	// Tx, when not nil, is the caller's transaction, which the store writes in and the
	// caller commits. Its type is the store's to choose and to document: *sql.Tx begun
	// on the store's database for the SQLite store; a driver's own transaction type
	// (pgx.Tx) or *sql.Tx for the PostgreSQL store. A store refuses a type it cannot
	// write in, or a nil value of one it can, with an error wrapping ErrInvalid.
	Tx    any
	Event Event
	// Now is the time of storing, from which retention counts.
	Now  time.Time
	Plan PlanFunc
	// Exclude, when not nil, is asked about every endpoint Plan gave no delivery, right
	// after Plan: a reason it returns is recorded in the event's Excluded.
	Exclude func(ep Endpoint) (reason string)
	// IdempotencyKey, when set, is the publisher's Idempotency-Key: the store keeps it
	// with Fingerprint and the event's id, in the publish's transaction. When the
	// account holds the key already, stored at or after KeySince, the publish writes
	// nothing: with the same Fingerprint it returns that event and its deliveries with
	// Duplicate set (an event since purged counts as no key); with another one it fails
	// with ErrConflict. A key stored before KeySince is replaced.
	IdempotencyKey string
	Fingerprint    string
	KeySince       time.Time
}

// Excluded is p.Exclude(ep), or "" without Exclude.
func (p PublishParams) Excluded(ep Endpoint) string {
	if p.Exclude == nil {
		return ""
	}
	return p.Exclude(ep)
}

// GetEventParams are the inputs of Store.GetEvent.
type GetEventParams struct {
	Account string
	ID      string
}

// EventQuery selects events: the inputs of Store.ListEvents.
type EventQuery struct {
	Account string
	// Since keeps events created at or after it (zero: all).
	Since time.Time
	Type  string
	// AfterID continues a listing after that event (cursor).
	AfterID string
	Limit   int
}

// ClaimParams are the inputs of Store.Claim.
type ClaimParams struct {
	Now        time.Time
	LeaseUntil time.Time
	Limit      int
	// Token marks the leases of this claim; Complete matches it.
	Token string
	// Reserve, when not nil, is called in the claim's transaction before it reads
	// (Reserved), with Limit; what it returns, at most Limit, is the claim's limit.
	// The engine reserves there the room the claim may fill, after the publishes
	// committed with it took theirs. It may be called more than once (a retried
	// transaction) and returns the same each time. A store must call it, through
	// Reserved, in every claim (the conformance contract ClaimReserve checks it): the
	// engine counts a claim's room by it, and a store that claimed Limit without it
	// could hold the node past its bound.
	Reserve func(limit int) int
}

// Reserved is p with Limit as Reserve returns it (p itself without Reserve): a store
// calls it in the claim's transaction, before it reads, and claims nothing when the
// limit is not positive.
func (p ClaimParams) Reserved() ClaimParams {
	if p.Reserve != nil && p.Limit > 0 {
		p.Limit = min(p.Limit, p.Reserve(p.Limit))
	}
	p.Reserve = nil
	return p
}

// CompleteClaimParams are the inputs of Store.CompleteClaim.
type CompleteClaimParams struct {
	Outcomes []Completion
	// Next is the claim made after the outcomes; none when its Limit is 0.
	Next ClaimParams
}

// ReapParams are the inputs of Store.Reap.
type ReapParams struct {
	Now    time.Time
	Limit  int
	Decide DecideFunc
}

// UpdateDeliveryParams are the inputs of Store.UpdateDelivery.
type UpdateDeliveryParams struct {
	Account string
	ID      string
	Decide  DecideFunc
}

// RecoverParams are the inputs of Store.Recover.
type RecoverParams struct {
	Account    string
	EndpointID string
	Since      time.Time
	Now        time.Time
	// Audit, when not nil, is written with the recover, its Count set.
	Audit *AuditEntry
}

// GetDeliveryParams are the inputs of Store.GetDelivery.
type GetDeliveryParams struct {
	Account string
	ID      string
}

// DeliveryQuery selects deliveries of an account: the inputs of Store.ListDeliveries.
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

// ListAuditParams are the inputs of Store.ListAudit.
type ListAuditParams struct {
	Account string
	// EndpointID, when set, keeps that endpoint's entries.
	EndpointID string
	// BeforeID continues a listing after that entry (cursor, newest first); 0 starts
	// at the newest.
	BeforeID int64
	Limit    int
}

// PurgeParams are the inputs of Store.Purge.
type PurgeParams struct {
	Before time.Time
	Limit  int
	// KeysBefore, when not zero, purges the idempotency keys stored before it.
	KeysBefore time.Time
}

// PlanFunc decides the delivery of a new event to one endpoint: ok false creates none;
// attempt, when not nil, is written with it (attempt 0 of a paused endpoint).
//
// A PENDING d with LeaseUntil set asks to be leased as it is stored, with the token
// PublishLeaseToken(d.ID): the store grants it when the endpoint is ACTIVE, not held
// at the time of storing, without a RateLimit (whose bucket only claims take from),
// and under its InFlightCap counting the leases it already
// has (those granted earlier in the same transaction included), and otherwise stores
// the delivery unleased, LeaseUntil nil in the Published result. A store whose
// publishes never wait may also store it unleased while another transaction holds the
// endpoint's in-flight count (pgstore): the delivery is then claimed like any other.
// The engine hands a granted delivery straight to its workers, with no claim.
type PlanFunc func(ep Endpoint) (d Delivery, attempt *Attempt, ok bool)

// PublishLeaseToken is the lease token of a delivery leased as it was published. A
// delivery is published once, so the token is unique among its leases; claims use
// random tokens.
func PublishLeaseToken(deliveryID string) string { return "pub_" + deliveryID }

// ChangeFunc returns the Change to apply to an endpoint given its current state. An
// error aborts the transaction. A store that retries a transaction (a serialization
// failure, a deadlock) calls it again on the state it reads then, and applies only
// that last Change.
type ChangeFunc func(ep Endpoint) (Change, error)

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
	// version, secrets, headers, channels, filter, rate limit, profile, overrides,
	// managed, status, health and InFlightCap (not the state of its rate limit's
	// bucket, which only claims change).
	// A RemovedAt set removes it: it disappears from reads and fan-out.
	Endpoint *Endpoint
	// At is when the change happens: the updated time of the waiting deliveries it
	// moves (Waiting). The delivery it rewrites takes Delivery.UpdatedAt.
	At time.Time
	// Waiting, when set, gives every other unleased PENDING delivery of the endpoint
	// this status (DROPPED when disabled or removed, FAILED when paused under a
	// profile that fails them), with WaitingReason as their last error.
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

// Job is one claimed delivery with what its attempt needs.
type Job struct {
	Delivery Delivery
	Event    Event
	Endpoint Endpoint
	Token    string
}

// Completion is the outcome of one claimed delivery.
type Completion struct {
	DeliveryID string
	Token      string
	Decide     DecideFunc
	// Delivery, when not nil, is the delivery as the claim (or the publish lease)
	// that gave Token returned it. While a delivery carries a lease nothing changes
	// it but the holder's completion (any other change clears the lease: the reaper,
	// a manual retry), so a store may decide on it instead of reading the row again
	// when the row still carries Token. Without it the store reads the row.
	Delivery *Delivery
}
