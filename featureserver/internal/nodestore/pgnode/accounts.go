package pgnode

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// PutAccount upserts the account row and its token row in one transaction; a
// bootstrap token first deletes the account's other bootstrap tokens, a rotation
// (ReplaceTokens) every other token of the account.
func (s *Store) PutAccount(ctx context.Context, p nodestore.PutAccountParams) error {
	a, err := nodestore.SealAccount(s.box, p.Account)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO fs_accounts(sid, name, webhook_secret, created_at, previous_webhook_secret, previous_secret_until)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT(sid) DO UPDATE SET name = excluded.name, webhook_secret = excluded.webhook_secret,
			previous_webhook_secret = excluded.previous_webhook_secret, previous_secret_until = excluded.previous_secret_until`,
			a.Sid, a.Name, a.WebhookSecret, ms(a.CreatedAt), a.PreviousWebhookSecret, msOrNull(a.PreviousSecretUntil)); err != nil {
			return err
		}
		if p.TokenHash == "" {
			return nil
		}
		if p.ReplaceTokens {
			if _, err := tx.Exec(ctx, `DELETE FROM fs_api_tokens WHERE account_sid = $1 AND token_hash <> $2`, a.Sid, p.TokenHash); err != nil {
				return err
			}
		}
		if p.Origin == nodestore.TokenFromBootstrap {
			if _, err := tx.Exec(ctx, `DELETE FROM fs_api_tokens WHERE account_sid = $1 AND origin = $2 AND token_hash <> $3`,
				a.Sid, string(nodestore.TokenFromBootstrap), p.TokenHash); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO fs_api_tokens(token_hash, account_sid, created_at, origin) VALUES ($1, $2, $3, $4)
			ON CONFLICT(token_hash) DO UPDATE SET account_sid = excluded.account_sid, origin = excluded.origin`,
			p.TokenHash, a.Sid, ms(a.CreatedAt), string(p.Origin)); err != nil {
			return err
		}
		return endRevokedSessions(ctx, tx, a.Sid)
	})
}

// AccountByToken joins the token's row to its account's.
func (s *Store) AccountByToken(ctx context.Context, tokenHash string) (nodestore.Account, error) {
	return s.scanAccount(s.pool.QueryRow(ctx, `SELECT a.sid, a.name, a.webhook_secret, a.created_at, a.previous_webhook_secret, a.previous_secret_until
		FROM fs_api_tokens t JOIN fs_accounts a ON a.sid = t.account_sid WHERE t.token_hash = $1`, tokenHash))
}

const accountColumns = `sid, name, webhook_secret, created_at, previous_webhook_secret, previous_secret_until`

// GetAccount reads one account row.
func (s *Store) GetAccount(ctx context.Context, sid string) (nodestore.Account, error) {
	return s.scanAccount(s.pool.QueryRow(ctx, `SELECT `+accountColumns+` FROM fs_accounts WHERE sid = $1`, sid))
}

// ListAccounts reads every account row by creation time.
func (s *Store) ListAccounts(ctx context.Context) ([]nodestore.Account, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+accountColumns+` FROM fs_accounts ORDER BY created_at, sid`)
	return sqlrows.Collect([]nodestore.Account{}, rows, err, s.scanAccount)
}

// DeleteAccount deletes the account's rows of every table in one transaction (the
// tokens, applications and notification settings also go by their foreign keys).
func (s *Store) DeleteAccount(ctx context.Context, sid string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := deleteRows(ctx, tx, `DELETE FROM fs_accounts WHERE sid = $1`, sid); err != nil {
			return err
		}
		for _, table := range nodestore.AccountTables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE account_sid = $1`, sid); err != nil {
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
	var until *time.Time
	if err := row.Scan(&a.Sid, &a.Name, &a.WebhookSecret, &a.CreatedAt, &a.PreviousWebhookSecret, &until); err != nil {
		return nodestore.Account{}, notFound(err)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if until != nil {
		a.PreviousSecretUntil = until.UTC()
	}
	return a, nil
}

// msOrNull stores the zero time as NULL.
func msOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	v := ms(t)
	return &v
}

// SaveStatusHook upserts the row of the account and URL.
func (s *Store) SaveStatusHook(ctx context.Context, p nodestore.SaveStatusHookParams) error {
	h := p.Hook
	password, err := s.box.Seal(h.Password, nodestore.WhereStatusHookPassword(p.AccountSid, p.URL))
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO fs_status_hooks(account_sid, url, method, username, password, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT(account_sid, url) DO UPDATE SET method = excluded.method,
		username = excluded.username, password = excluded.password, updated_at = excluded.updated_at`,
		p.AccountSid, p.URL, h.Method, h.Username, password, ms(p.At))
	return err
}

// GetStatusHook reads the row of the account and URL.
func (s *Store) GetStatusHook(ctx context.Context, p nodestore.GetStatusHookParams) (nodestore.HookSpec, error) {
	h := nodestore.HookSpec{URL: p.URL}
	err := s.pool.QueryRow(ctx, `SELECT method, username, password FROM fs_status_hooks
		WHERE account_sid = $1 AND url = $2`, p.AccountSid, p.URL).Scan(&h.Method, &h.Username, &h.Password)
	if err != nil {
		return nodestore.HookSpec{}, notFound(err)
	}
	if h.Password, err = s.box.Open(h.Password, nodestore.WhereStatusHookPassword(p.AccountSid, p.URL)); err != nil {
		return nodestore.HookSpec{}, fmt.Errorf("the stored secret of a status hook of account %s: %w (SWITCHBOARD_SECRETS_KEY)", p.AccountSid, err)
	}
	return h, nil
}

// SaveNotifications upserts the account's row, its e-mail recipients as JSON.
func (s *Store) SaveNotifications(ctx context.Context, p nodestore.SaveNotificationsParams) error {
	emails := p.Notifications.Emails
	if emails == nil {
		emails = []string{}
	}
	b, err := json.Marshal(emails)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO fs_account_notifications (account_sid, webhook_url, emails, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_sid) DO UPDATE SET webhook_url = excluded.webhook_url, emails = excluded.emails, updated_at = excluded.updated_at`,
		p.AccountSid, p.Notifications.WebhookURL, string(b), ms(p.At))
	return err
}

// GetNotifications reads the account's row; none is the empty setting.
func (s *Store) GetNotifications(ctx context.Context, accountSid string) (nodestore.Notifications, error) {
	return nodestore.ScanNotifications(s.pool.QueryRow(ctx, `SELECT webhook_url, emails::text FROM fs_account_notifications WHERE account_sid = $1`, accountSid), pgx.ErrNoRows)
}

// AddAlert appends a row; its id orders the alerts of one millisecond.
func (s *Store) AddAlert(ctx context.Context, a nodestore.Alert) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO fs_alerts(account_sid, type, call_sid, url, detail, at) VALUES ($1, $2, $3, $4, $5, $6)`,
		a.AccountSid, a.Type, a.CallSid, a.URL, a.Detail, ms(a.Time))
	return err
}

// ListAlerts reads the account's rows by time (the index on account and time), then
// id.
func (s *Store) ListAlerts(ctx context.Context, p nodestore.ListAlertsParams) ([]nodestore.Alert, error) {
	rows, err := s.pool.Query(ctx, `SELECT type, call_sid, url, detail, at FROM fs_alerts
		WHERE account_sid = $1 AND ($2 = '' OR type = $2) AND at >= $3 ORDER BY at, id LIMIT $4`,
		p.AccountSid, p.Type, ms(p.Since), p.Limit)
	return sqlrows.Collect([]nodestore.Alert{}, rows, err, func(r sqlrows.Row) (nodestore.Alert, error) {
		a := nodestore.Alert{AccountSid: p.AccountSid}
		var at time.Time
		err := r.Scan(&a.Type, &a.CallSid, &a.URL, &a.Detail, &at)
		a.Time = at.UTC()
		return a, err
	})
}

// AddMessage inserts the message's row.
func (s *Store) AddMessage(ctx context.Context, m nodestore.Message) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO fs_messages(message_sid, account_sid, from_number, to_number, body, media, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, m.MessageSid, m.AccountSid, m.From, m.To, m.Text, m.Media, m.Status, ms(m.CreatedAt))
	return err
}

// ListMessages reads the account's rows, newest first.
func (s *Store) ListMessages(ctx context.Context, accountSid string, limit int) ([]nodestore.Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT message_sid, from_number, to_number, body, media, status, created_at FROM fs_messages
		WHERE account_sid = $1 ORDER BY created_at DESC, message_sid LIMIT $2`, accountSid, limit)
	return sqlrows.Collect([]nodestore.Message{}, rows, err, func(r sqlrows.Row) (nodestore.Message, error) {
		m := nodestore.Message{AccountSid: accountSid}
		var at time.Time
		err := r.Scan(&m.MessageSid, &m.From, &m.To, &m.Text, &m.Media, &m.Status, &at)
		m.CreatedAt = at.UTC()
		return m, err
	})
}
