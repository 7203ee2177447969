package sqlitenode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// CreateSession inserts the session and deletes its account's least recently used
// sessions past the bound, in one transaction.
func (s *Store) CreateSession(ctx context.Context, p nodestore.CreateSessionParams) error {
	ss := p.Session
	portal, err := nodestore.EncodePortalScope(ss.Portal)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		// Inserted only for an account that exists: none inserted is ErrNotFound.
		if err := deleteRows(ctx, tx, `INSERT INTO fs_console_sessions(id_hash, account_sid, token_hash, created_at, last_seen_at, expires_at, portal)
			SELECT ?, sid, ?, ?, ?, ?, ? FROM fs_accounts WHERE sid = ?`, ss.IDHash, ss.TokenHash, ss.CreatedAt.UnixMilli(), ss.LastSeenAt.UnixMilli(),
			ss.ExpiresAt.UnixMilli(), portal, ss.AccountSid); err != nil {
			return err
		}
		// The bound counts the sessions of the new one's kind: portal sessions never
		// end the account's own, nor the other way round.
		_, err := tx.ExecContext(ctx, `DELETE FROM fs_console_sessions WHERE id_hash IN (
			SELECT id_hash FROM fs_console_sessions WHERE account_sid = ? AND (portal = '') = ?
			ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC LIMIT -1 OFFSET ?)`, ss.AccountSid, portal == "", max(p.MaxPerAccount, 1))
		return err
	})
}

// GetSession reads the session's row.
func (s *Store) GetSession(ctx context.Context, idHash string) (nodestore.Session, error) {
	var (
		ss                     = nodestore.Session{IDHash: idHash}
		created, seen, expires int64
		portal                 string
	)
	err := s.db.QueryRowContext(ctx, `SELECT account_sid, token_hash, created_at, last_seen_at, expires_at, portal
		FROM fs_console_sessions WHERE id_hash = ?`, idHash).Scan(&ss.AccountSid, &ss.TokenHash, &created, &seen, &expires, &portal)
	if errors.Is(err, sql.ErrNoRows) {
		return nodestore.Session{}, nodestore.ErrNotFound
	}
	if err != nil {
		return nodestore.Session{}, err
	}
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC(), time.UnixMilli(expires).UTC()
	ss.Portal, err = nodestore.DecodePortalScope(portal)
	return ss, err
}

// TouchSession updates the row's last use.
func (s *Store) TouchSession(ctx context.Context, p nodestore.TouchSessionParams) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return deleteRows(ctx, tx, `UPDATE fs_console_sessions SET last_seen_at = ? WHERE id_hash = ?`, p.At.UnixMilli(), p.IDHash)
	})
}

// DeleteSession deletes the row.
func (s *Store) DeleteSession(ctx context.Context, idHash string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return deleteRows(ctx, tx, `DELETE FROM fs_console_sessions WHERE id_hash = ?`, idHash)
	})
}

// PurgeSessions deletes the rows expired or idle.
func (s *Store) PurgeSessions(ctx context.Context, p nodestore.PurgeSessionsParams) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM fs_console_sessions WHERE expires_at <= ? OR last_seen_at < ?`,
			p.Now.UnixMilli(), p.IdleBefore.UnixMilli())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM fs_portal_links WHERE expires_at <= ?`, p.Now.UnixMilli()); err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// endRevokedSessions deletes the account's sessions opened with a token it no
// longer has.
func endRevokedSessions(ctx context.Context, tx *sql.Tx, account string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM fs_console_sessions WHERE account_sid = ? AND token_hash <> ''
		AND token_hash NOT IN (SELECT token_hash FROM fs_api_tokens WHERE account_sid = ?)`, account, account)
	return err
}

// CreatePortalLink inserts the link of a stored account.
func (s *Store) CreatePortalLink(ctx context.Context, l nodestore.PortalLink) error {
	endpoints, err := json.Marshal(nonNil(l.Endpoints))
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM fs_accounts WHERE sid = ?)`, l.AccountSid).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return nodestore.ErrNotFound
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO fs_portal_links(id_hash, id, account_sid, endpoints, created_by, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, l.IDHash, l.ID, l.AccountSid, string(endpoints), l.CreatedBy, l.CreatedAt.UnixMilli(), l.ExpiresAt.UnixMilli())
		return err
	})
}

// RedeemPortalLink marks an unused, live link used, in one statement.
func (s *Store) RedeemPortalLink(ctx context.Context, p nodestore.RedeemPortalLinkParams) (nodestore.PortalLink, error) {
	var l nodestore.PortalLink
	err := s.write(ctx, func(tx *sql.Tx) error {
		var endpoints string
		var created, expires, used int64
		err := tx.QueryRowContext(ctx, `UPDATE fs_portal_links SET used_at = ? WHERE id_hash = ? AND used_at IS NULL AND expires_at > ?
			RETURNING id, account_sid, endpoints, created_by, created_at, expires_at, used_at`, p.Now.UnixMilli(), p.IDHash, p.Now.UnixMilli()).
			Scan(&l.ID, &l.AccountSid, &endpoints, &l.CreatedBy, &created, &expires, &used)
		if errors.Is(err, sql.ErrNoRows) {
			return nodestore.ErrNotFound
		}
		if err != nil {
			return err
		}
		l.IDHash = p.IDHash
		l.CreatedAt, l.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
		u := time.UnixMilli(used).UTC()
		l.UsedAt = &u
		return json.Unmarshal([]byte(endpoints), &l.Endpoints)
	})
	return l, err
}

// SavePortalSettings upserts the account's row.
func (s *Store) SavePortalSettings(ctx context.Context, p nodestore.PortalSettings) error {
	origins, err := json.Marshal(nonNil(p.FrameAncestors))
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO fs_portal_settings(account_sid, frame_ancestors) VALUES (?, ?)
			ON CONFLICT (account_sid) DO UPDATE SET frame_ancestors = excluded.frame_ancestors`, p.AccountSid, string(origins))
		return err
	})
}

// GetPortalSettings reads the account's row; none is empty settings.
func (s *Store) GetPortalSettings(ctx context.Context, accountSid string) (nodestore.PortalSettings, error) {
	out := nodestore.PortalSettings{AccountSid: accountSid, FrameAncestors: []string{}}
	var origins string
	err := s.db.QueryRowContext(ctx, `SELECT frame_ancestors FROM fs_portal_settings WHERE account_sid = ?`, accountSid).Scan(&origins)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal([]byte(origins), &out.FrameAncestors)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
