-- +goose Up
-- The retention purge walks deliveries by created_at: without an index of its own it
-- read and sorted the whole table in every batch, holding the write lock.
CREATE INDEX outbox_deliveries_created ON outbox_deliveries (created_at);

-- Per-endpoint lookups only ever ask for PENDING deliveries (pausing or disabling an
-- endpoint moves its waiting ones) or FAILED ones (bulk recover). Indexing just those
-- two states keeps a delivery's success out of the index: it leaves the PENDING index
-- and enters no other, where the old (endpoint_id, status, created_at) index took an
-- insert in the middle of the tree for every success. One index per state, because
-- SQLite uses a partial index only when the query repeats its WHERE term.
DROP INDEX outbox_deliveries_endpoint;
CREATE INDEX outbox_deliveries_endpoint_pending ON outbox_deliveries (endpoint_id, created_at)
    WHERE status = 'PENDING';
CREATE INDEX outbox_deliveries_endpoint_failed ON outbox_deliveries (endpoint_id, created_at)
    WHERE status = 'FAILED';
