package nodestore

import (
	"context"
	"time"
)

// Store keeps what a node knows apart from its outbox. The SQLite store
// (nodestore/sqlitenode) implements it, and every implementation passes the suite of
// nodestore/nodestoretest.
//
// A record of one account is never returned to a request naming another: such a
// lookup fails with ErrNotFound, as a missing record does. A method that returns an
// error changes nothing. When ctx ends before the work is done, the method returns an
// error (ctx's, wrapped or not) and keeps nothing it would have written. Times come
// back in UTC, at millisecond precision except inside a Call, which comes back exactly
// as it was saved. A Store is safe for concurrent use.
type Store interface {
	// PutAccount stores p.Account, or updates the name and webhook secrets (current
	// and previous, with its grace period) of the account with its sid (its
	// creation time stays), and, when p.TokenHash is set, the API token of that hash
	// for the account, with p.Origin. A token hash already stored names p.Account's
	// account afterwards. A TokenFromBootstrap token replaces the account's earlier
	// bootstrap tokens; TokenFromAPI tokens stay, unless p.ReplaceTokens. The
	// account's console sessions opened with a token this revokes end with it.
	PutAccount(ctx context.Context, p PutAccountParams) error
	// ListAccounts returns every account, oldest first (then by sid).
	ListAccounts(ctx context.Context) ([]Account, error)
	// DeleteAccount removes the account with everything it owns: its API tokens,
	// console sessions, applications, call records, alerts, status hooks and notice
	// settings.
	DeleteAccount(ctx context.Context, sid string) error
	// GetAccount returns the account with that sid.
	GetAccount(ctx context.Context, sid string) (Account, error)
	// AccountByToken returns the account that the API token of that hash (HashToken)
	// belongs to.
	AccountByToken(ctx context.Context, tokenHash string) (Account, error)

	// SaveApplication stores app, an application of a stored account, or replaces the name and hooks of the application
	// with its sid when that one belongs to the same account (its creation time
	// stays). An application of another account with that sid is left as it is.
	SaveApplication(ctx context.Context, app Application) error
	// GetApplication returns one application of the account.
	GetApplication(ctx context.Context, p GetApplicationParams) (Application, error)
	// ListApplications returns the account's applications, oldest first (then by
	// sid); none is an empty result, not an error.
	ListApplications(ctx context.Context, accountSid string) ([]Application, error)
	// DeleteApplication removes one application of the account.
	DeleteApplication(ctx context.Context, p DeleteApplicationParams) error

	// AddMessage records an SMS message the account sent (simulated); ListMessages
	// returns the account's, newest first, at most limit.
	AddMessage(ctx context.Context, m Message) error
	ListMessages(ctx context.Context, accountSid string, limit int) ([]Message, error)

	// AddAlert records an alert on a.AccountSid.
	AddAlert(ctx context.Context, a Alert) error
	// ListAlerts returns the account's alerts selected by p, oldest first (alerts of
	// the same millisecond in the order they were added).
	ListAlerts(ctx context.Context, p ListAlertsParams) ([]Alert, error)

	// SaveCall stores c, or replaces the record of the call with its sid: its state
	// and timeline, and whether it is active (see InterruptActiveCalls). A call's
	// account, application and creation time are those of its first save: a later
	// save must carry the same.
	SaveCall(ctx context.Context, c Call) error
	// GetCall returns the record of one call of the account.
	GetCall(ctx context.Context, p GetCallParams) (Call, error)
	// ListCalls returns the account's call records selected by p, newest first
	// (by creation time at the millisecond, then by sid): a listing continued
	// from a cursor (p.After) neither repeats nor skips a call, whatever calls are
	// saved meanwhile, since new calls are newer.
	ListCalls(ctx context.Context, p ListCallsParams) ([]Call, error)
	// DeleteCall removes one call record of the account.
	DeleteCall(ctx context.Context, p GetCallParams) error
	// PurgeCalls removes at most p.Limit records of calls not active that were
	// created before p.Before, oldest first, and returns how many it removed.
	PurgeCalls(ctx context.Context, p PurgeCallsParams) (int, error)
	// ActiveCalls returns the record of every call saved as active, with its
	// Recovery, oldest first (then by sid): what a run of the node that crashed left
	// in progress.
	ActiveCalls(ctx context.Context) ([]Call, error)
	// InterruptActiveCalls replaces the record of every call saved as active (a run
	// of the node that crashed or was killed left them so) with what end returns for
	// it, saved as not active, and returns how many there were. end must not call
	// the store.
	InterruptActiveCalls(ctx context.Context, end func(Call) Call) (int, error)

	// LeaseNode takes or renews the lease of node p.ID, answering at p.URL, until
	// p.TTL from now by the store's clock (the database's on PostgreSQL, so that
	// nodes' clocks need not agree). A TTL of zero or less leaves the lease expired.
	LeaseNode(ctx context.Context, p LeaseNodeParams) error
	// GetNode returns the lease of the node with that id.
	GetNode(ctx context.Context, id string) (Node, error)
	// InterruptLostCalls replaces the record of every active call whose node holds
	// no live lease (it died, or lost the database for longer than its lease), and
	// of every active call of node p.Restarted whatever its lease, with what end
	// returns for it, saved as not active, and returns how many there were. Several
	// nodes may run it at once: each call is ended once. end must not call the
	// store.
	InterruptLostCalls(ctx context.Context, p InterruptLostCallsParams, end func(Call) Call) (int, error)
	// LostCalls returns the record of every call InterruptLostCalls with p would end
	// now, with its Recovery, oldest first (then by sid): what a node reads before
	// ending them, to send their final status notifications first.
	LostCalls(ctx context.Context, p InterruptLostCallsParams) ([]Call, error)

	// SaveStatusHook records how the account configured its status hook at p.URL
	// (its query included): the method and Basic credentials, replacing what was
	// recorded.
	SaveStatusHook(ctx context.Context, p SaveStatusHookParams) error
	// GetStatusHook returns what SaveStatusHook recorded for the account and URL,
	// with the URL set.
	GetStatusHook(ctx context.Context, p GetStatusHookParams) (HookSpec, error)

	// SaveNotifications records where the account's endpoint notices go, replacing
	// what was recorded.
	SaveNotifications(ctx context.Context, p SaveNotificationsParams) error
	// GetNotifications returns where the account's endpoint notices go: none set is
	// an empty Notifications (Emails empty, not nil), not an error.
	GetNotifications(ctx context.Context, accountSid string) (Notifications, error)

	// CreateSession stores p.Session, a new console session of a stored account,
	// and ends the account's least recently used sessions (by LastSeenAt, then
	// CreatedAt, then IDHash) beyond p.MaxPerAccount, in one transaction.
	CreateSession(ctx context.Context, p CreateSessionParams) error
	// GetSession returns the session of that IDHash.
	GetSession(ctx context.Context, idHash string) (Session, error)
	// TouchSession sets the session's LastSeenAt.
	TouchSession(ctx context.Context, p TouchSessionParams) error
	// DeleteSession ends the session of that IDHash (sign-out).
	DeleteSession(ctx context.Context, idHash string) error
	// PurgeSessions removes the sessions expired or idle by p and returns how many.
	PurgeSessions(ctx context.Context, p PurgeSessionsParams) (int, error)

	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Close releases the database. Nothing may use the store afterwards.
	Close() error
}

// PutAccountParams are the inputs of Store.PutAccount.
type PutAccountParams struct {
	// Account is stored; its CreatedAt must be set.
	Account Account
	// TokenHash is the HashToken of an API token for the account; empty: none.
	TokenHash string
	// Origin is where the token comes from.
	Origin TokenOrigin
	// ReplaceTokens, with TokenHash set, revokes every other API token of the
	// account (a rotation).
	ReplaceTokens bool
}

// GetApplicationParams are the inputs of Store.GetApplication.
type GetApplicationParams struct {
	AccountSid string
	Sid        string
}

// DeleteApplicationParams are the inputs of Store.DeleteApplication.
type DeleteApplicationParams struct {
	AccountSid string
	Sid        string
}

// ListAlertsParams select alerts: the inputs of Store.ListAlerts.
type ListAlertsParams struct {
	AccountSid string
	// Type keeps alerts of that type; empty: every type.
	Type string
	// Since keeps alerts at or after it; zero: all.
	Since time.Time
	// Limit bounds the alerts returned; it is at least 1.
	Limit int
}

// LeaseNodeParams are the inputs of Store.LeaseNode.
type LeaseNodeParams struct {
	ID  string
	URL string
	TTL time.Duration
}

// InterruptLostCallsParams are the inputs of Store.InterruptLostCalls.
type InterruptLostCallsParams struct {
	// Restarted, when set, is a node whose active calls are lost whatever its
	// lease: the node itself, at its start, for the calls of its previous run.
	Restarted string
}

// GetCallParams are the inputs of Store.GetCall.
type GetCallParams struct {
	AccountSid string
	CallSid    string
}

// ListCallsParams select call records: the inputs of Store.ListCalls.
type ListCallsParams struct {
	AccountSid string
	// Limit bounds the records returned; it is at least 1.
	Limit int
	// After, when set, continues a listing: only calls after it in the order of
	// ListCalls (older, or as old at the millisecond with a greater sid).
	After *CallKey
	// Status keeps calls whose recorded call_status it is; empty: all.
	Status string
	// Direction keeps calls of that direction; empty: both.
	Direction string
	// Since keeps calls created at or after it; zero: no bound.
	Since time.Time
	// Until keeps calls created before it; zero: no bound.
	Until time.Time
}

// CallKey is a call's place in the order of ListCalls.
type CallKey struct {
	// CreatedAt is the call's creation time; only its millisecond counts.
	CreatedAt time.Time
	Sid       string
}

// PurgeCallsParams are the inputs of Store.PurgeCalls.
type PurgeCallsParams struct {
	// Before: records of calls created before it go.
	Before time.Time
	// Limit bounds the records removed at once; it is at least 1.
	Limit int
}

// SaveStatusHookParams are the inputs of Store.SaveStatusHook.
type SaveStatusHookParams struct {
	AccountSid string
	// URL is the hook's URL as the outbox delivers to it, its query included.
	URL string
	// Hook holds the method and credentials; its URL is not used.
	Hook HookSpec
	// At is when the configuration was seen.
	At time.Time
}

// SaveNotificationsParams are the inputs of Store.SaveNotifications.
type SaveNotificationsParams struct {
	AccountSid    string
	Notifications Notifications
	// At is when they were set.
	At time.Time
}

// GetStatusHookParams are the inputs of Store.GetStatusHook.
type GetStatusHookParams struct {
	AccountSid string
	URL        string
}
