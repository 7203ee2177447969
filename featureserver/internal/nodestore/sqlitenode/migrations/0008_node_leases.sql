-- +goose Up
-- Which node runs each call, and the nodes' leases on their calls (issue 16): the
-- same records as on PostgreSQL, where several nodes share them.
ALTER TABLE fs_calls ADD COLUMN node_id TEXT NOT NULL DEFAULT '';
CREATE TABLE fs_nodes (
    id             TEXT PRIMARY KEY,
    url            TEXT NOT NULL,
    lease_until_ms INTEGER NOT NULL
);
