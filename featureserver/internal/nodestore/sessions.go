package nodestore

import "time"

// Session is a signed-in web console session. The secret that names it (the
// browser's cookie) is never stored: the store keeps its HashToken, so a leaked
// database gives no session away.
type Session struct {
	// IDHash is the HashToken of the session's secret: its key.
	IDHash     string
	AccountSid string
	// TokenHash is the HashToken of the API token the session was opened with: the
	// session ends when that token is revoked (PutAccount's ReplaceTokens, a newer
	// bootstrap token). Empty for a session opened without one.
	TokenHash string
	CreatedAt time.Time
	// LastSeenAt is when the session was last used (TouchSession): the console's
	// idle timeout counts from it.
	LastSeenAt time.Time
	// ExpiresAt is the session's absolute end, whatever its use.
	ExpiresAt time.Time
}

// CreateSessionParams are the inputs of Store.CreateSession.
type CreateSessionParams struct {
	Session Session
	// MaxPerAccount bounds the sessions of the session's account: past it, the
	// account's least recently used sessions end, never another account's. At
	// least 1.
	MaxPerAccount int
}

// TouchSessionParams are the inputs of Store.TouchSession.
type TouchSessionParams struct {
	IDHash string
	At     time.Time
}

// PurgeSessionsParams are the inputs of Store.PurgeSessions.
type PurgeSessionsParams struct {
	// Now: sessions whose ExpiresAt is at or before it go.
	Now time.Time
	// IdleBefore: sessions last seen before it go.
	IdleBefore time.Time
}
