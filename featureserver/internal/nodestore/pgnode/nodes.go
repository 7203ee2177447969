package pgnode

import (
	"context"

	"github.com/switchboard-voice/switchboard/featureserver/internal/nodestore"
)

// LeaseNode upserts the node's row, its lease ending TTL after the database's now().
func (s *Store) LeaseNode(ctx context.Context, p nodestore.LeaseNodeParams) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO fs_nodes(id, url, lease_until) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
		ON CONFLICT(id) DO UPDATE SET url = excluded.url, lease_until = excluded.lease_until`, p.ID, p.URL, p.TTL.Milliseconds())
	return err
}

// GetNode reads the node's row; live is judged by the database's clock.
func (s *Store) GetNode(ctx context.Context, id string) (nodestore.Node, error) {
	n := nodestore.Node{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT url, lease_until, lease_until > now() FROM fs_nodes WHERE id = $1`, id).Scan(&n.URL, &n.LeaseUntil, &n.Live)
	if err != nil {
		return nodestore.Node{}, notFound(err)
	}
	n.LeaseUntil = n.LeaseUntil.UTC()
	return n, nil
}
