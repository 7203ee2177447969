package pgnode

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// ResealSecrets seals every secret the store keeps again under its first key
// (Options.Secrets; without one, writes them in clear), opening each with any key
// given, and returns how many values it rewrote. A value is rewritten only if it is
// still the one read, so that nodes running meanwhile (with the same keys) lose
// none of their writes; one transaction per column.
func (s *Store) ResealSecrets(ctx context.Context) (int, error) {
	columns := []struct {
		query, update string
		reseal        func(k1, k2, stored string) (string, bool, error)
	}{
		{`SELECT sid, '', webhook_secret FROM fs_accounts`, `UPDATE fs_accounts SET webhook_secret = $1 WHERE sid = $2 AND '' = $3 AND webhook_secret = $4`,
			func(sid, _, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereAccountSecret(sid, false))
			}},
		{`SELECT sid, '', previous_webhook_secret FROM fs_accounts`, `UPDATE fs_accounts SET previous_webhook_secret = $1 WHERE sid = $2 AND '' = $3 AND previous_webhook_secret = $4`,
			func(sid, _, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereAccountSecret(sid, true))
			}},
		{`SELECT account_sid, url, password FROM fs_status_hooks`, `UPDATE fs_status_hooks SET password = $1 WHERE account_sid = $2 AND url = $3 AND password = $4`,
			func(account, url, stored string) (string, bool, error) {
				return s.box.Reseal(stored, nodestore.WhereStatusHookPassword(account, url))
			}},
		{`SELECT sid, '', call_hook::text FROM fs_applications`, `UPDATE fs_applications SET call_hook = $1::json WHERE sid = $2 AND '' = $3 AND call_hook::text = $4`,
			func(sid, _, stored string) (string, bool, error) {
				return nodestore.ResealHook(s.box, sid, false, stored)
			}},
		{`SELECT sid, '', call_status_hook::text FROM fs_applications`, `UPDATE fs_applications SET call_status_hook = $1::json WHERE sid = $2 AND '' = $3 AND call_status_hook::text = $4`,
			func(sid, _, stored string) (string, bool, error) {
				return nodestore.ResealHook(s.box, sid, true, stored)
			}},
		{`SELECT sid, '', recovery::text FROM fs_calls WHERE recovery IS NOT NULL`, `UPDATE fs_calls SET recovery = $1::json WHERE sid = $2 AND '' = $3 AND recovery::text = $4`,
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
// key, key, old), those that reseal changes, in one transaction.
func (s *Store) reseal(ctx context.Context, query, update string, reseal func(k1, k2, stored string) (string, bool, error)) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		type row struct{ k1, k2, stored string }
		rows, err := tx.Query(ctx, query)
		if err != nil {
			return err
		}
		all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var v row
			err := r.Scan(&v.k1, &v.k2, &v.stored)
			return v, err
		})
		if err != nil {
			return err
		}
		for _, r := range all {
			out, changed, err := reseal(r.k1, r.k2, r.stored)
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			tag, err := tx.Exec(ctx, update, out, r.k1, r.k2, r.stored)
			if err != nil {
				return err
			}
			if tag.RowsAffected() > 0 {
				n++
			}
		}
		return nil
	})
	return n, err
}
