package pgnode

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// CreateSession inserts the session and deletes its account's least recently used
// sessions past the bound, in one transaction. The account's row is locked
// meanwhile, so that concurrent sign-ins of one account keep its bound.
func (s *Store) CreateSession(ctx context.Context, p nodestore.CreateSessionParams) error {
	ss := p.Session
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sid string
		if err := tx.QueryRow(ctx, `SELECT sid FROM fs_accounts WHERE sid = $1 FOR UPDATE`, ss.AccountSid).Scan(&sid); err != nil {
			return notFound(err)
		}
		portal, err := nodestore.EncodePortalScope(ss.Portal)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO fs_console_sessions(id_hash, account_sid, token_hash, created_at, last_seen_at, expires_at, portal)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, ss.IDHash, ss.AccountSid, ss.TokenHash, ms(ss.CreatedAt), ms(ss.LastSeenAt), ms(ss.ExpiresAt), portal); err != nil {
			return err
		}
		// The bound counts the sessions of the new one's kind: portal sessions never
		// end the account's own, nor the other way round.
		_, err = tx.Exec(ctx, `DELETE FROM fs_console_sessions WHERE id_hash IN (
			SELECT id_hash FROM fs_console_sessions WHERE account_sid = $1 AND (portal = '') = $2
			ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC OFFSET $3)`, ss.AccountSid, portal == "", max(p.MaxPerAccount, 1))
		return err
	})
}

// GetSession reads the session's row.
func (s *Store) GetSession(ctx context.Context, idHash string) (nodestore.Session, error) {
	ss := nodestore.Session{IDHash: idHash}
	var portal string
	err := s.pool.QueryRow(ctx, `SELECT account_sid, token_hash, created_at, last_seen_at, expires_at, portal
		FROM fs_console_sessions WHERE id_hash = $1`, idHash).Scan(&ss.AccountSid, &ss.TokenHash, &ss.CreatedAt, &ss.LastSeenAt, &ss.ExpiresAt, &portal)
	if err != nil {
		return nodestore.Session{}, notFound(err)
	}
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = ss.CreatedAt.UTC(), ss.LastSeenAt.UTC(), ss.ExpiresAt.UTC()
	ss.Portal, err = nodestore.DecodePortalScope(portal)
	return ss, err
}

// TouchSession updates the row's last use.
func (s *Store) TouchSession(ctx context.Context, p nodestore.TouchSessionParams) error {
	return deleteRows(ctx, s.pool, `UPDATE fs_console_sessions SET last_seen_at = $1 WHERE id_hash = $2`, ms(p.At), p.IDHash)
}

// DeleteSession deletes the row.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	return deleteRows(ctx, s.pool, `DELETE FROM fs_console_sessions WHERE id_hash = $1`, idHash)
}

// PurgeSessions deletes the rows expired or idle.
func (s *Store) PurgeSessions(ctx context.Context, p nodestore.PurgeSessionsParams) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM fs_console_sessions WHERE expires_at <= $1 OR last_seen_at < $2`, ms(p.Now), ms(p.IdleBefore))
	if err != nil {
		return 0, err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM fs_portal_links WHERE expires_at <= $1`, ms(p.Now)); err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// endRevokedSessions deletes the account's sessions opened with a token it no
// longer has.
func endRevokedSessions(ctx context.Context, tx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, account string) error {
	_, err := tx.Exec(ctx, `DELETE FROM fs_console_sessions WHERE account_sid = $1 AND token_hash <> ''
		AND token_hash NOT IN (SELECT token_hash FROM fs_api_tokens WHERE account_sid = $1)`, account)
	return err
}

// CreatePortalLink inserts the link of a stored account.
func (s *Store) CreatePortalLink(ctx context.Context, l nodestore.PortalLink) error {
	endpoints := l.Endpoints
	if endpoints == nil {
		endpoints = []string{}
	}
	// The insert selects the account's row: none inserted is an unknown account.
	tag, err := s.pool.Exec(ctx, `INSERT INTO fs_portal_links(id_hash, id, account_sid, endpoints, created_by, created_at, expires_at)
		SELECT $1, $2, sid, $4, $5, $6, $7 FROM fs_accounts WHERE sid = $3`,
		l.IDHash, l.ID, l.AccountSid, endpoints, l.CreatedBy, ms(l.CreatedAt), ms(l.ExpiresAt))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nodestore.ErrNotFound
	}
	return nil
}

// RedeemPortalLink marks an unused, live link used, in one statement: of two
// redeeming it at once, the row's lock lets one through.
func (s *Store) RedeemPortalLink(ctx context.Context, p nodestore.RedeemPortalLinkParams) (nodestore.PortalLink, error) {
	l := nodestore.PortalLink{IDHash: p.IDHash}
	var used time.Time
	err := s.pool.QueryRow(ctx, `UPDATE fs_portal_links SET used_at = $1 WHERE id_hash = $2 AND used_at IS NULL AND expires_at > $1
		RETURNING id, account_sid, endpoints, created_by, created_at, expires_at, used_at`, ms(p.Now), p.IDHash).
		Scan(&l.ID, &l.AccountSid, &l.Endpoints, &l.CreatedBy, &l.CreatedAt, &l.ExpiresAt, &used)
	if err != nil {
		return nodestore.PortalLink{}, notFound(err)
	}
	l.CreatedAt, l.ExpiresAt = l.CreatedAt.UTC(), l.ExpiresAt.UTC()
	used = used.UTC()
	l.UsedAt = &used
	return l, nil
}

// SavePortalSettings upserts the account's row.
func (s *Store) SavePortalSettings(ctx context.Context, p nodestore.PortalSettings) error {
	origins := p.FrameAncestors
	if origins == nil {
		origins = []string{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO fs_portal_settings(account_sid, frame_ancestors) VALUES ($1, $2)
		ON CONFLICT (account_sid) DO UPDATE SET frame_ancestors = excluded.frame_ancestors`, p.AccountSid, origins)
	return err
}

// GetPortalSettings reads the account's row; none is empty settings.
func (s *Store) GetPortalSettings(ctx context.Context, accountSid string) (nodestore.PortalSettings, error) {
	out := nodestore.PortalSettings{AccountSid: accountSid, FrameAncestors: []string{}}
	err := s.pool.QueryRow(ctx, `SELECT frame_ancestors FROM fs_portal_settings WHERE account_sid = $1`, accountSid).Scan(&out.FrameAncestors)
	if errors.Is(err, pgx.ErrNoRows) {
		return out, nil
	}
	return out, err
}
