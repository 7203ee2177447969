package sqlitenode

import (
	"context"
	"database/sql"
	"errors"

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
	return s.exec(ctx, `INSERT INTO fs_calls(sid, account_sid, application_sid, record, active, created_at_ms, recovery, node_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(sid) DO UPDATE SET record = excluded.record, active = excluded.active, recovery = excluded.recovery, node_id = excluded.node_id`,
		c.CallSid, c.AccountSid, c.ApplicationSid, record, c.Active, c.CreatedAt.UnixMilli(), recovery, c.Node)
}

// ActiveCalls reads the active rows (a partial index holds them) with their
// recovery.
func (s *Store) ActiveCalls(ctx context.Context) ([]nodestore.Call, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT record, recovery FROM fs_calls WHERE active = 1 ORDER BY created_at_ms, sid`)
	return sqlrows.Collect([]nodestore.Call{}, rows, err, s.scanCallWithRecovery)
}

// InterruptActiveCalls reads the active rows (a partial index holds them) and
// replaces their records in one transaction: all of them, or none.
func (s *Store) InterruptActiveCalls(ctx context.Context, end func(nodestore.Call) nodestore.Call) (int, error) {
	var n int
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = interruptActiveCalls(ctx, tx, end)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func interruptActiveCalls(ctx context.Context, tx *sql.Tx, end func(nodestore.Call) nodestore.Call) (int, error) {
	return endCalls(ctx, tx, end, `SELECT sid, record FROM fs_calls WHERE active = 1`)
}

// endCalls rewrites the calls the query selects (sid, record) as end makes them,
// inactive and without recovery, and returns how many there were.
func endCalls(ctx context.Context, tx *sql.Tx, end func(nodestore.Call) nodestore.Call, query string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	type pending struct{ sid, record string }
	calls, err := sqlrows.Collect(nil, rows, err, func(r sqlrows.Row) (pending, error) {
		var p pending
		err := r.Scan(&p.sid, &p.record)
		return p, err
	})
	if err != nil {
		return 0, err
	}
	for _, p := range calls {
		record, err := nodestore.EndedRecord(p.sid, p.record, end)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE fs_calls SET record = ?, active = 0, recovery = NULL WHERE sid = ?`, record, p.sid); err != nil {
			return 0, err
		}
	}
	return len(calls), nil
}

// GetCall reads the account's row of that sid and decodes its record.
func (s *Store) GetCall(ctx context.Context, p nodestore.GetCallParams) (nodestore.Call, error) {
	var rec string
	err := s.db.QueryRowContext(ctx, `SELECT record FROM fs_calls WHERE account_sid = ? AND sid = ?`, p.AccountSid, p.CallSid).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return nodestore.Call{}, nodestore.ErrNotFound
	}
	if err != nil {
		return nodestore.Call{}, err
	}
	return nodestore.DecodeCall(rec)
}

// ListCalls reads the account's rows by the creation-time column, newest first,
// from the cursor's row on (keyset paging: new rows are newer than any cursor);
// status and direction are read in the record.
func (s *Store) ListCalls(ctx context.Context, p nodestore.ListCallsParams) ([]nodestore.Call, error) {
	q := `SELECT record FROM fs_calls WHERE account_sid = ?`
	args := []any{p.AccountSid}
	if p.After != nil {
		ms := p.After.CreatedAt.UnixMilli()
		q += ` AND (created_at_ms < ? OR (created_at_ms = ? AND sid > ?))`
		args = append(args, ms, ms, p.After.Sid)
	}
	if p.Status != "" {
		q += ` AND json_extract(record, '$.call_status') = ?`
		args = append(args, p.Status)
	}
	if p.Direction != "" {
		q += ` AND json_extract(record, '$.direction') = ?`
		args = append(args, p.Direction)
	}
	if !p.Since.IsZero() {
		q += ` AND created_at_ms >= ?`
		args = append(args, p.Since.UnixMilli())
	}
	if !p.Until.IsZero() {
		q += ` AND created_at_ms < ?`
		args = append(args, p.Until.UnixMilli())
	}
	q += ` ORDER BY created_at_ms DESC, sid LIMIT ?`
	rows, err := s.db.QueryContext(ctx, q, append(args, p.Limit)...)
	return sqlrows.Collect([]nodestore.Call{}, rows, err, nodestore.ScanCall)
}

// DeleteCall deletes the account's row of that sid.
func (s *Store) DeleteCall(ctx context.Context, p nodestore.GetCallParams) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return deleteRows(ctx, tx, `DELETE FROM fs_calls WHERE account_sid = ? AND sid = ?`, p.AccountSid, p.CallSid)
	})
}

// PurgeCalls deletes the oldest rows not active before the bound, a batch at a time
// (a partial index holds them), so that a purge never holds the database long.
func (s *Store) PurgeCalls(ctx context.Context, p nodestore.PurgeCallsParams) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM fs_calls WHERE sid IN (SELECT sid FROM fs_calls
			WHERE active = 0 AND created_at_ms < ? ORDER BY created_at_ms LIMIT ?)`, p.Before.UnixMilli(), p.Limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// scanCallWithRecovery reads a call's record and recovery, its password opened.
func (s *Store) scanCallWithRecovery(r sqlrows.Row) (nodestore.Call, error) {
	c, err := nodestore.ScanCallWithRecovery(r)
	return nodestore.OpenCall(s.box, c, err)
}
