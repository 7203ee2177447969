package pgnode

import (
	"context"

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
		if _, err := tx.Exec(ctx, `INSERT INTO fs_console_sessions(id_hash, account_sid, token_hash, created_at, last_seen_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, ss.IDHash, ss.AccountSid, ss.TokenHash, ms(ss.CreatedAt), ms(ss.LastSeenAt), ms(ss.ExpiresAt)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM fs_console_sessions WHERE id_hash IN (
			SELECT id_hash FROM fs_console_sessions WHERE account_sid = $1
			ORDER BY last_seen_at DESC, created_at DESC, id_hash DESC OFFSET $2)`, ss.AccountSid, max(p.MaxPerAccount, 1))
		return err
	})
}

// GetSession reads the session's row.
func (s *Store) GetSession(ctx context.Context, idHash string) (nodestore.Session, error) {
	ss := nodestore.Session{IDHash: idHash}
	err := s.pool.QueryRow(ctx, `SELECT account_sid, token_hash, created_at, last_seen_at, expires_at
		FROM fs_console_sessions WHERE id_hash = $1`, idHash).Scan(&ss.AccountSid, &ss.TokenHash, &ss.CreatedAt, &ss.LastSeenAt, &ss.ExpiresAt)
	if err != nil {
		return nodestore.Session{}, notFound(err)
	}
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt = ss.CreatedAt.UTC(), ss.LastSeenAt.UTC(), ss.ExpiresAt.UTC()
	return ss, nil
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
