package pgnode

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// SaveCall upserts the row: the record as its JSON, with the columns it is found by,
// and its Recovery as JSON beside it; an update changes only the record, the
// recovery, whether the call is active, and its node.
func (s *Store) SaveCall(ctx context.Context, c nodestore.Call) error {
	c, err := nodestore.SealCall(s.box, c)
	if err != nil {
		return err
	}
	record, recovery, err := nodestore.EncodeCall(c)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO fs_calls(sid, account_sid, application_sid, record, active, created_at, node_id, recovery) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT(sid) DO UPDATE SET record = excluded.record, active = excluded.active, node_id = excluded.node_id, recovery = excluded.recovery`,
		c.CallSid, c.AccountSid, c.ApplicationSid, record, c.Active, ms(c.CreatedAt), c.Node, recovery)
	return err
}

// ActiveCalls reads the active rows (a partial index holds them) with their
// recovery, of every node.
func (s *Store) ActiveCalls(ctx context.Context) ([]nodestore.Call, error) {
	rows, err := s.pool.Query(ctx, `SELECT record::text, recovery::text FROM fs_calls WHERE active ORDER BY created_at, sid`)
	return sqlrows.Collect([]nodestore.Call{}, rows, err, s.scanCallWithRecovery)
}

// lostCalls is the condition of a lost active call c: its node is the restarted one
// ($1) or holds no lease live by the database's clock.
const lostCalls = `c.active AND (c.node_id = $1
		OR NOT EXISTS (SELECT 1 FROM fs_nodes n WHERE n.id = c.node_id AND n.lease_until > now()))`

// LostCalls reads the lost active rows with their recovery.
func (s *Store) LostCalls(ctx context.Context, p nodestore.InterruptLostCallsParams) ([]nodestore.Call, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.record::text, c.recovery::text FROM fs_calls c WHERE `+lostCalls+` ORDER BY c.created_at, c.sid`, p.Restarted)
	return sqlrows.Collect([]nodestore.Call{}, rows, err, s.scanCallWithRecovery)
}

// InterruptActiveCalls locks the active rows (a partial index holds them) and
// replaces their records in one transaction: all of them, or none. Rows another
// transaction holds are skipped (SKIP LOCKED): a node ending them at the same time
// ends each once.
func (s *Store) InterruptActiveCalls(ctx context.Context, end func(nodestore.Call) nodestore.Call) (int, error) {
	return s.interrupt(ctx, `SELECT sid, record::text FROM fs_calls WHERE active FOR UPDATE SKIP LOCKED`, nil, end)
}

// InterruptLostCalls is InterruptActiveCalls of the active calls whose node holds no
// lease live by the database's clock, or is p.Restarted.
func (s *Store) InterruptLostCalls(ctx context.Context, p nodestore.InterruptLostCallsParams, end func(nodestore.Call) nodestore.Call) (int, error) {
	return s.interrupt(ctx, `SELECT c.sid, c.record::text FROM fs_calls c WHERE `+lostCalls+`
		FOR UPDATE OF c SKIP LOCKED`, []any{p.Restarted}, end)
}

// interrupt ends the calls query selects (and locks), in one transaction.
func (s *Store) interrupt(ctx context.Context, query string, args []any, end func(nodestore.Call) nodestore.Call) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n = 0
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		type pending struct{ sid, record string }
		calls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pending, error) {
			var p pending
			return p, r.Scan(&p.sid, &p.record)
		})
		if err != nil {
			return err
		}
		for _, p := range calls {
			record, err := nodestore.EndedRecord(p.sid, p.record, end)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE fs_calls SET record = $1, active = false, recovery = NULL WHERE sid = $2`, record, p.sid); err != nil {
				return err
			}
		}
		n = len(calls)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// GetCall reads the account's row of that sid and decodes its record.
func (s *Store) GetCall(ctx context.Context, p nodestore.GetCallParams) (nodestore.Call, error) {
	var rec string
	err := s.pool.QueryRow(ctx, `SELECT record::text FROM fs_calls WHERE account_sid = $1 AND sid = $2`, p.AccountSid, p.CallSid).Scan(&rec)
	if err != nil {
		return nodestore.Call{}, notFound(err)
	}
	return nodestore.DecodeCall(rec)
}

// ListCalls reads the account's rows by the creation-time index, newest first.
func (s *Store) ListCalls(ctx context.Context, p nodestore.ListCallsParams) ([]nodestore.Call, error) {
	q := `SELECT record::text FROM fs_calls WHERE account_sid = $1`
	args := []any{p.AccountSid}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.After != nil {
		at := arg(ms(p.After.CreatedAt))
		q += ` AND (created_at < ` + at + ` OR (created_at = ` + at + ` AND sid > ` + arg(p.After.Sid) + `))`
	}
	if p.Status != "" {
		q += ` AND record->>'call_status' = ` + arg(p.Status)
	}
	if p.Direction != "" {
		q += ` AND record->>'direction' = ` + arg(p.Direction)
	}
	if !p.Since.IsZero() {
		q += ` AND created_at >= ` + arg(ms(p.Since))
	}
	if !p.Until.IsZero() {
		q += ` AND created_at < ` + arg(ms(p.Until))
	}
	q += ` ORDER BY created_at DESC, sid LIMIT ` + arg(p.Limit)
	rows, err := s.pool.Query(ctx, q, args...)
	return sqlrows.Collect([]nodestore.Call{}, rows, err, nodestore.ScanCall)
}

// DeleteCall deletes the account's row of that sid.
func (s *Store) DeleteCall(ctx context.Context, p nodestore.GetCallParams) error {
	return deleteRows(ctx, s.pool, `DELETE FROM fs_calls WHERE account_sid = $1 AND sid = $2`, p.AccountSid, p.CallSid)
}

// PurgeCalls deletes the oldest rows not active before the bound, a batch at a time
// (a partial index holds them), so that a purge never holds the table long. Nodes
// sharing the database purge at once: each locks the rows of its batch and skips
// those another locked (SKIP LOCKED), so that they take disjoint batches rather than
// wait on each other, and each counts only what it deleted.
func (s *Store) PurgeCalls(ctx context.Context, p nodestore.PurgeCallsParams) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM fs_calls WHERE sid IN (SELECT sid FROM fs_calls
		WHERE NOT active AND created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, ms(p.Before), p.Limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// scanCallWithRecovery reads a call's record and recovery, its password opened.
func (s *Store) scanCallWithRecovery(r sqlrows.Row) (nodestore.Call, error) {
	c, err := nodestore.ScanCallWithRecovery(r)
	return nodestore.OpenCall(s.box, c, err)
}
