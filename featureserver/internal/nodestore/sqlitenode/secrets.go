package sqlitenode

import (
	"context"
	"database/sql"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// ResealSecrets seals every secret the store keeps again under its first key
// (Options.Secrets; without one, writes them in clear), opening each with any key
// given, and returns how many values it rewrote. A value is rewritten only if it is
// still the one read (a concurrent write wins), in a transaction per column.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	columns := []struct {
		query, update string
		reseal        func(k1, k2, stored string) (string, bool, error)
	}{
		{`SELECT sid, '', webhook_secret FROM fs_accounts`, `UPDATE fs_accounts SET webhook_secret = ? WHERE sid = ? AND '' = ? AND webhook_secret = ?`,
			func(sid, _, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereAccountSecret(sid, false))
			}},
		{`SELECT sid, '', previous_webhook_secret FROM fs_accounts`, `UPDATE fs_accounts SET previous_webhook_secret = ? WHERE sid = ? AND '' = ? AND previous_webhook_secret = ?`,
			func(sid, _, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereAccountSecret(sid, true))
			}},
		{`SELECT account_sid, url, password FROM fs_status_hooks`, `UPDATE fs_status_hooks SET password = ? WHERE account_sid = ? AND url = ? AND password = ?`,
			func(account, url, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereStatusHookPassword(account, url))
			}},
		{`SELECT sid, '', call_hook FROM fs_applications`, `UPDATE fs_applications SET call_hook = ? WHERE sid = ? AND '' = ? AND call_hook = ?`,
			func(sid, _, stored string) (string, bool, error) {
				return nodestore.ResealHook(s.box, sid, false, stored)
			}},
		{`SELECT sid, '', call_status_hook FROM fs_applications`, `UPDATE fs_applications SET call_status_hook = ? WHERE sid = ? AND '' = ? AND call_status_hook = ?`,
			func(sid, _, stored string) (string, bool, error) {
				return nodestore.ResealHook(s.box, sid, true, stored)
			}},
		{`SELECT sid, '', recovery FROM fs_calls WHERE recovery IS NOT NULL`, `UPDATE fs_calls SET recovery = ? WHERE sid = ? AND '' = ? AND recovery = ?`,
			func(sid, _, stored string) (string, bool, error) { return nodestore.ResealRecovery(s.box, sid, stored) }},
	}
	total := 0
	for _, c := range columns {
		n, err := s.reseal(ctx, c.query, c.update, c.reseal)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// reseal reads (key, key, value) rows with query and rewrites, with update(new,
// key, key, old), those that reseal changes, in one write transaction.
func (s *Store) reseal(ctx context.Context, query, update string, reseal func(k1, k2, stored string) (string, bool, error)) (int, error) {
	type row struct{ k1, k2, stored string }
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.k1, &r.k2, &r.stored); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	err = s.write(ctx, func(tx *sql.Tx) error {
		n = 0 // a retried transaction counts afresh
		for _, r := range all {
			out, changed, err := reseal(r.k1, r.k2, r.stored)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			res, err := tx.ExecContext(ctx, update, out, r.k1, r.k2, r.stored)
			if err != nil {
				return err
			}
			if k, _ := res.RowsAffected(); k > 0 {
				n++
			}
		}
		return nil
	})
	return n, err
}
