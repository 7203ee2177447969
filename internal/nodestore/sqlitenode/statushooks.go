package sqlitenode

import (
	"context"
	"database/sql"
	"errors"

	"github.com/switchboard-voice/switchboard/internal/nodestore"
)

// SaveStatusHook implements nodestore.Store.
func (s *Store) SaveStatusHook(ctx context.Context, p nodestore.SaveStatusHookParams) error {
	h := p.Hook
	_, err := s.db.ExecContext(ctx, `INSERT INTO fs_status_hooks(account_sid, url, method, username, password, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(account_sid, url) DO UPDATE SET method = excluded.method,
		username = excluded.username, password = excluded.password, updated_at = excluded.updated_at`,
		p.AccountSid, p.URL, h.Method, h.Username, h.Password, p.At.UnixMilli())
	return err
}

// GetStatusHook implements nodestore.Store.
func (s *Store) GetStatusHook(ctx context.Context, p nodestore.GetStatusHookParams) (nodestore.HookSpec, error) {
	h := nodestore.HookSpec{URL: p.URL}
	err := s.db.QueryRowContext(ctx, `SELECT method, username, password FROM fs_status_hooks
		WHERE account_sid = ? AND url = ?`, p.AccountSid, p.URL).Scan(&h.Method, &h.Username, &h.Password)
	if errors.Is(err, sql.ErrNoRows) {
		return nodestore.HookSpec{}, nodestore.ErrNotFound
	}
	if err != nil {
		return nodestore.HookSpec{}, err
	}
	return h, nil
}
