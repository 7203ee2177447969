package sqlitenode

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
	"github.com/switchboard-voice/switchboard/internal/sqlrows"
)

// LeaseNode upserts the node's row, its lease ending TTL after the store's clock.
func (s *Store) LeaseNode(ctx context.Context, p nodestore.LeaseNodeParams) error {
	until := s.clock.Now().Add(p.TTL).UnixMilli()
	return s.exec(ctx, `INSERT INTO fs_nodes(id, url, lease_until_ms) VALUES (?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET url = excluded.url, lease_until_ms = excluded.lease_until_ms`, p.ID, p.URL, until)
}

// GetNode reads the node's row; live is judged by the store's clock.
func (s *Store) GetNode(ctx context.Context, id string) (nodestore.Node, error) {
	n := nodestore.Node{ID: id}
	var until int64
	err := s.db.QueryRowContext(ctx, `SELECT url, lease_until_ms FROM fs_nodes WHERE id = ?`, id).Scan(&n.URL, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return nodestore.Node{}, nodestore.ErrNotFound
	}
	if err != nil {
		return nodestore.Node{}, err
	}
	n.LeaseUntil = time.UnixMilli(until).UTC()
	n.Live = until > s.clock.Now().UnixMilli()
	return n, nil
}

// lostCalls is the condition of a lost active call c: its node is the restarted one
// (the first argument) or holds no lease live at the second (Unix ms).
const lostCalls = `c.active = 1 AND (c.node_id = ?
		OR NOT EXISTS (SELECT 1 FROM fs_nodes n WHERE n.id = c.node_id AND n.lease_until_ms > ?))`

// LostCalls reads the lost active rows with their recovery.
func (s *Store) LostCalls(ctx context.Context, p nodestore.InterruptLostCallsParams) ([]nodestore.Call, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.record, c.recovery FROM fs_calls c WHERE `+lostCalls+` ORDER BY c.created_at_ms, c.sid`,
		p.Restarted, s.clock.Now().UnixMilli())
	return sqlrows.Collect([]nodestore.Call{}, rows, err, s.scanCallWithRecovery)
}

// InterruptLostCalls reads the lost active rows and replaces their records in one
// transaction of the store's writer (the file's only writer: nothing else writes
// beside it).
func (s *Store) InterruptLostCalls(ctx context.Context, p nodestore.InterruptLostCallsParams, end func(nodestore.Call) nodestore.Call) (int, error) {
	var n int
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = interruptLostCalls(ctx, tx, p, s.clock.Now().UnixMilli(), end)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func interruptLostCalls(ctx context.Context, tx *sql.Tx, p nodestore.InterruptLostCallsParams, nowMs int64, end func(nodestore.Call) nodestore.Call) (int, error) {
	return endCalls(ctx, tx, end, `SELECT c.sid, c.record FROM fs_calls c WHERE `+lostCalls, p.Restarted, nowMs)
}
