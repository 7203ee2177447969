package sqlitenode

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// PutAccount implements nodestore.Store.
func (s *Store) PutAccount(ctx context.Context, p nodestore.PutAccountParams) error {
	a := p.Account
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO fs_accounts(sid, name, webhook_secret, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(sid) DO UPDATE SET name = excluded.name, webhook_secret = excluded.webhook_secret`,
		a.Sid, a.Name, a.WebhookSecret, a.CreatedAt.UnixMilli()); err != nil {
		return err
	}
	if p.TokenHash != "" {
		if p.Origin == nodestore.TokenFromBootstrap {
			if _, err := tx.ExecContext(ctx, `DELETE FROM fs_api_tokens WHERE account_sid = ? AND origin = ? AND token_hash <> ?`,
				a.Sid, string(nodestore.TokenFromBootstrap), p.TokenHash); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fs_api_tokens(token_hash, account_sid, created_at, origin) VALUES (?, ?, ?, ?)
			ON CONFLICT(token_hash) DO UPDATE SET account_sid = excluded.account_sid, origin = excluded.origin`,
			p.TokenHash, a.Sid, a.CreatedAt.UnixMilli(), string(p.Origin)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AccountByToken implements nodestore.Store.
func (s *Store) AccountByToken(ctx context.Context, tokenHash string) (nodestore.Account, error) {
	return scanAccount(s.db.QueryRowContext(ctx, `SELECT a.sid, a.name, a.webhook_secret, a.created_at
		FROM fs_api_tokens t JOIN fs_accounts a ON a.sid = t.account_sid WHERE t.token_hash = ?`, tokenHash))
}

// GetAccount implements nodestore.Store.
func (s *Store) GetAccount(ctx context.Context, sid string) (nodestore.Account, error) {
	return scanAccount(s.db.QueryRowContext(ctx, `SELECT sid, name, webhook_secret, created_at FROM fs_accounts WHERE sid = ?`, sid))
}

func scanAccount(row *sql.Row) (nodestore.Account, error) {
	var a nodestore.Account
	var created int64
	if err := row.Scan(&a.Sid, &a.Name, &a.WebhookSecret, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nodestore.Account{}, nodestore.ErrNotFound
		}
		return nodestore.Account{}, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	return a, nil
}
