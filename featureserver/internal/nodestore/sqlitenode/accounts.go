package sqlitenode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// PutAccount upserts the account row and its token row in one transaction; a
// bootstrap token first deletes the account's other bootstrap tokens.
func (s *Store) PutAccount(ctx context.Context, p nodestore.PutAccountParams) error {
	var err error
	if p.Account, err = nodestore.SealAccount(s.box, p.Account); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error { return putAccount(ctx, tx, p) })
}

func putAccount(ctx context.Context, tx *sql.Tx, p nodestore.PutAccountParams) error {
	a := p.Account
	if _, err := tx.ExecContext(ctx, `INSERT INTO fs_accounts(sid, name, webhook_secret, created_at, previous_webhook_secret, previous_secret_until)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(sid) DO UPDATE SET name = excluded.name, webhook_secret = excluded.webhook_secret,
		previous_webhook_secret = excluded.previous_webhook_secret, previous_secret_until = excluded.previous_secret_until`,
		a.Sid, a.Name, a.WebhookSecret, a.CreatedAt.UnixMilli(), a.PreviousWebhookSecret, unixMilliOrZero(a.PreviousSecretUntil)); err != nil {
		return err
	}
	if p.TokenHash != "" && p.ReplaceTokens {
		if _, err := tx.ExecContext(ctx, `DELETE FROM fs_api_tokens WHERE account_sid = ? AND token_hash <> ?`, a.Sid, p.TokenHash); err != nil {
			return err
		}
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
		return endRevokedSessions(ctx, tx, a.Sid)
	}
	return nil
}

// AccountByToken joins the token's row to its account's.
func (s *Store) AccountByToken(ctx context.Context, tokenHash string) (nodestore.Account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT a.sid, a.name, a.webhook_secret, a.created_at, a.previous_webhook_secret, a.previous_secret_until
		FROM fs_api_tokens t JOIN fs_accounts a ON a.sid = t.account_sid WHERE t.token_hash = ?`, tokenHash))
}

// GetAccount reads one account row.
func (s *Store) GetAccount(ctx context.Context, sid string) (nodestore.Account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM fs_accounts WHERE sid = ?`, sid))
}

const accountColumns = `sid, name, webhook_secret, created_at, previous_webhook_secret, previous_secret_until`

// ListAccounts reads every account row by creation time.
func (s *Store) ListAccounts(ctx context.Context) ([]nodestore.Account, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+accountColumns+` FROM fs_accounts ORDER BY created_at, sid`)
	return sqlrows.Collect([]nodestore.Account{}, rows, err, s.scanAccount)
}

// DeleteAccount deletes the account's rows of every table in one transaction.
func (s *Store) DeleteAccount(ctx context.Context, sid string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := deleteRows(ctx, tx, `DELETE FROM fs_accounts WHERE sid = ?`, sid); err != nil {
			return err
		}
		for _, table := range nodestore.AccountTables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE account_sid = ?`, sid); err != nil {
				return err
			}
		}
		return nil
	})
}

// scanAccount reads an account row, its secrets opened.
func (s *Store) scanAccount(row sqlrows.Row) (nodestore.Account, error) {
	a, err := scanAccount(row)
	return nodestore.OpenAccount(s.box, a, err)
}

func scanAccount(row sqlrows.Row) (nodestore.Account, error) {
	var a nodestore.Account
	var created, until int64
	if err := row.Scan(&a.Sid, &a.Name, &a.WebhookSecret, &created, &a.PreviousWebhookSecret, &until); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nodestore.Account{}, nodestore.ErrNotFound
		}
		return nodestore.Account{}, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	if until != 0 {
		a.PreviousSecretUntil = time.UnixMilli(until).UTC()
	}
	return a, nil
}

// unixMilliOrZero stores the zero time as 0.
func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// SaveStatusHook upserts the row of the account and URL.
func (s *Store) SaveStatusHook(ctx context.Context, p nodestore.SaveStatusHookParams) error {
	h := p.Hook
	password, err := s.box.Seal(h.Password, nodestore.WhereStatusHookPassword(p.AccountSid, p.URL))
	if err != nil {
		return err
	}
	return s.exec(ctx, `INSERT INTO fs_status_hooks(account_sid, url, method, username, password, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(account_sid, url) DO UPDATE SET method = excluded.method,
		username = excluded.username, password = excluded.password, updated_at = excluded.updated_at`,
		p.AccountSid, p.URL, h.Method, h.Username, password, p.At.UnixMilli())
}

// GetStatusHook reads the row of the account and URL.
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
	if h.Password, err = s.box.Open(h.Password, nodestore.WhereStatusHookPassword(p.AccountSid, p.URL)); err != nil {
		return nodestore.HookSpec{}, fmt.Errorf("the stored secret of a status hook of account %s: %w (SWITCHBOARD_SECRETS_KEY)", p.AccountSid, err)
	}
	return h, nil
}

// SaveNotifications upserts the account's row, its e-mail recipients as JSON.
func (s *Store) SaveNotifications(ctx context.Context, p nodestore.SaveNotificationsParams) error {
	emails, err := json.Marshal(p.Notifications.Emails)
	if err != nil {
		return err
	}
	return s.exec(ctx, `INSERT INTO fs_account_notifications (account_sid, webhook_url, emails, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (account_sid) DO UPDATE SET webhook_url = excluded.webhook_url, emails = excluded.emails, updated_at = excluded.updated_at`,
		p.AccountSid, p.Notifications.WebhookURL, string(emails), p.At.UnixMilli())
}

// GetNotifications reads the account's row; none is the empty setting.
func (s *Store) GetNotifications(ctx context.Context, accountSid string) (nodestore.Notifications, error) {
	return nodestore.ScanNotifications(s.db.QueryRowContext(ctx, `SELECT webhook_url, emails FROM fs_account_notifications WHERE account_sid = ?`, accountSid), sql.ErrNoRows)
}
