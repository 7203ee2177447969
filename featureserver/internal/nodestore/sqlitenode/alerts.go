package sqlitenode

import (
	"context"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// AddAlert appends a row; its id orders the alerts of one millisecond.
func (s *Store) AddAlert(ctx context.Context, a nodestore.Alert) error {
	return s.exec(ctx, `INSERT INTO fs_alerts(account_sid, type, call_sid, url, detail, at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
		a.AccountSid, a.Type, a.CallSid, a.URL, a.Detail, a.Time.UnixMilli())
}

// ListAlerts reads the account's rows by time (the index on account and time), then
// id.
func (s *Store) ListAlerts(ctx context.Context, p nodestore.ListAlertsParams) ([]nodestore.Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT type, call_sid, url, detail, at_ms FROM fs_alerts
		WHERE account_sid = ? AND (? = '' OR type = ?) AND at_ms >= ? ORDER BY at_ms, id LIMIT ?`,
		p.AccountSid, p.Type, p.Type, p.Since.UnixMilli(), p.Limit)
	return sqlrows.Collect([]nodestore.Alert{}, rows, err, func(r sqlrows.Row) (nodestore.Alert, error) {
		a := nodestore.Alert{AccountSid: p.AccountSid}
		var at int64
		err := r.Scan(&a.Type, &a.CallSid, &a.URL, &a.Detail, &at)
		a.Time = time.UnixMilli(at).UTC()
		return a, err
	})
}

// AddMessage inserts the message's row.
func (s *Store) AddMessage(ctx context.Context, m nodestore.Message) error {
	return s.exec(ctx, `INSERT INTO fs_messages(message_sid, account_sid, from_number, to_number, body, media, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, m.MessageSid, m.AccountSid, m.From, m.To, m.Text, m.Media, m.Status, m.CreatedAt.UnixMilli())
}

// ListMessages reads the account's rows, newest first.
func (s *Store) ListMessages(ctx context.Context, accountSid string, limit int) ([]nodestore.Message, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT message_sid, from_number, to_number, body, media, status, created_at FROM fs_messages
		WHERE account_sid = ? ORDER BY created_at DESC, message_sid LIMIT ?`, accountSid, limit)
	return sqlrows.Collect([]nodestore.Message{}, rows, err, func(r sqlrows.Row) (nodestore.Message, error) {
		m := nodestore.Message{AccountSid: accountSid}
		var at int64
		err := r.Scan(&m.MessageSid, &m.From, &m.To, &m.Text, &m.Media, &m.Status, &at)
		m.CreatedAt = time.UnixMilli(at).UTC()
		return m, err
	})
}
