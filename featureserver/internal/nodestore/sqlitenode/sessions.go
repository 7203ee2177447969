package sqlitenode

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// CreateSession inserts the session and deletes its account's least recently used
// sessions past the bound, in one transaction.
func (s *Store) CreateSession(ctx context.Context, p nodestore.CreateSessionParams) error {
	ss := p.Session
	return s.write(ctx, func(tx *sql.Tx) error {
		// Inserted only for an account that exists: none inserted is ErrNotFound.
		if err := deleteRows(ctx, tx, `INSERT INTO fs_console_sessions(id_hash, account_sid, token_hash, created_at, last_seen_at, expires_at)
			SELECT ?, sid, ?, ?, ?, ? FROM fs_accounts WHERE sid = ?`, ss.IDHash, ss.TokenHash, ss.CreatedAt.UnixMilli(), ss.LastSeenAt.UnixMilli(),
			ss.ExpiresAt.UnixMilli(), ss.AccountSid); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM fs_console_sessions WHERE id_hash IN (
			SELECT id_hash FROM fs_console_sessions WHERE account_sid = ?
			ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC LIMIT -1 OFFSET ?)`, ss.AccountSid, max(p.MaxPerAccount, 1))
		return err
	})
}

// GetSession reads the session's row.
func (s *Store) GetSession(ctx context.Context, idHash string) (nodestore.Session, error) {
	var (
		ss                     = nodestore.Session{IDHash: idHash}
		created, seen, expires int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT account_sid, token_hash, created_at, last_seen_at, expires_at
		FROM fs_console_sessions WHERE id_hash = ?`, idHash).Scan(&ss.AccountSid, &ss.TokenHash, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nodestore.Session{}, nodestore.ErrNotFound
	}
	if err != nil {
		return nodestore.Session{}, err
	}
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(seen).UTC(), time.UnixMilli(expires).UTC()
	return ss, nil
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
