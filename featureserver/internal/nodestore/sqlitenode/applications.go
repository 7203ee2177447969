package sqlitenode

import (
	"context"
	"database/sql"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// SaveApplication upserts the row, its hooks as JSON; the upsert's WHERE leaves a row
// of another account alone.
func (s *Store) SaveApplication(ctx context.Context, app nodestore.Application) error {
	app, err := nodestore.SealApplication(s.box, app)
	if err != nil {
		return err
	}
	callHook, statusHook, err := nodestore.EncodeHooks(app)
	if err != nil {
		return err
	}
	settings, err := nodestore.EncodeSettings(app)
	if err != nil {
		return err
	}
	return s.exec(ctx, `INSERT INTO fs_applications(sid, account_sid, name, call_hook, call_status_hook, created_at, settings)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(sid) DO UPDATE SET name = excluded.name, call_hook = excluded.call_hook,
		call_status_hook = excluded.call_status_hook, settings = excluded.settings WHERE fs_applications.account_sid = excluded.account_sid`,
		app.Sid, app.AccountSid, app.Name, callHook, statusHook, app.CreatedAt.UnixMilli(), settings)
}

// GetApplication reads the account's row of that sid.
func (s *Store) GetApplication(ctx context.Context, p nodestore.GetApplicationParams) (nodestore.Application, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sid, account_sid, name, call_hook, call_status_hook, created_at, settings
		FROM fs_applications WHERE account_sid = ? AND sid = ?`, p.AccountSid, p.Sid)
	return sqlrows.First(rows, err, s.scanApplication, nodestore.ErrNotFound)
}

// ListApplications reads the account's rows in creation order.
func (s *Store) ListApplications(ctx context.Context, accountSid string) ([]nodestore.Application, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sid, account_sid, name, call_hook, call_status_hook, created_at, settings
		FROM fs_applications WHERE account_sid = ? ORDER BY created_at, sid`, accountSid)
	return sqlrows.Collect([]nodestore.Application{}, rows, err, s.scanApplication)
}

// DeleteApplication deletes the account's row of that sid; no row deleted is
// ErrNotFound.
func (s *Store) DeleteApplication(ctx context.Context, p nodestore.DeleteApplicationParams) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return deleteRows(ctx, tx, `DELETE FROM fs_applications WHERE account_sid = ? AND sid = ?`, p.AccountSid, p.Sid)
	})
}

// scanApplication reads an application row, its hooks' passwords opened.
func (s *Store) scanApplication(r sqlrows.Row) (nodestore.Application, error) {
	app, err := scanApplication(r)
	return nodestore.OpenApplication(s.box, app, err)
}

func scanApplication(r sqlrows.Row) (nodestore.Application, error) {
	var (
		a                    nodestore.Application
		callHook, statusHook string
		created              int64
		settings             string
	)
	if err := r.Scan(&a.Sid, &a.AccountSid, &a.Name, &callHook, &statusHook, &created, &settings); err != nil {
		return nodestore.Application{}, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	if err := nodestore.DecodeHooks(&a, callHook, statusHook); err != nil {
		return nodestore.Application{}, err
	}
	if err := nodestore.DecodeSettings(&a, settings); err != nil {
		return nodestore.Application{}, err
	}
	return a, nil
}
