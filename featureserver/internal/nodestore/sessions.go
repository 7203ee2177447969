package nodestore

import (
	"encoding/json"
	"fmt"
	"time"
)

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
	// Portal, when set, makes the session a consumer portal's (docs/outbox.md §9):
	// it reaches the account's endpoints (or those named) and their deliveries,
	// nothing else. Nil for an account's own console session.
	Portal *PortalScope
}

// PortalScope is what a consumer portal's session may reach.
type PortalScope struct {
	// LinkID is the public id of the magic link that opened the session: the audit
	// log's actor.
	LinkID string `json:"linkId"`
	// Endpoints confines the session to these endpoints; empty: every endpoint of
	// the account.
	Endpoints []string `json:"endpoints,omitempty"`
}

// PortalLink is a magic link into the consumer portal: single-use, short-lived.
// Its secret (the link's last path segment) is kept as its hash only.
type PortalLink struct {
	// IDHash is the HashToken of the link's secret: its key.
	IDHash string
	// ID names the link in answers and in the audit log (pl_...).
	ID         string
	AccountSid string
	// Endpoints confines the session it opens (PortalScope.Endpoints).
	Endpoints []string
	// CreatedBy names who minted it: an API token's id, or admin.
	CreatedBy string
	CreatedAt time.Time
	// ExpiresAt is when the link stops opening a session, used or not.
	ExpiresAt time.Time
	// UsedAt is when it opened its session; nil until then.
	UsedAt *time.Time
}

// RedeemPortalLinkParams are the inputs of Store.RedeemPortalLink.
type RedeemPortalLinkParams struct {
	IDHash string
	Now    time.Time
}

// PortalSettings are an account's settings of its consumer portal.
type PortalSettings struct {
	AccountSid string
	// FrameAncestors are the origins (scheme://host[:port]) whose pages may frame the
	// portal (CSP frame-ancestors); none: no page may.
	FrameAncestors []string
}

// CreateSessionParams are the inputs of Store.CreateSession.
type CreateSessionParams struct {
	Session Session
	// MaxPerAccount bounds the sessions of the session's account of the same kind
	// (the account's own, or its portal's): past it, the account's least recently
	// used sessions of that kind end, never another account's nor of the other kind.
	// At least 1.
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

// EncodePortalScope is the stored form of a session's portal scope: its JSON, or ""
// for an account's own session.
func EncodePortalScope(p *PortalScope) (string, error) {
	if p == nil {
		return "", nil
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// DecodePortalScope reads what EncodePortalScope stored.
func DecodePortalScope(s string) (*PortalScope, error) {
	if s == "" {
		return nil, nil
	}
	var p PortalScope
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("a session's stored portal scope: %w", err)
	}
	return &p, nil
}
