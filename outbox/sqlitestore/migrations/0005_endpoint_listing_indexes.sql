-- +goose Up
-- An endpoint's delivery log, newest first (GET /api/v1/webhooks/{id}/deliveries):
-- without an index of its own the listing walked the account's index, reading every
-- delivery of the account's other endpoints (docs/outbox.md §5). A delivery enters
-- this index once, when it is created: its endpoint and creation time never change.
CREATE INDEX outbox_deliveries_endpoint_listing ON outbox_deliveries (endpoint_id, created_at, id);

-- A status filter walks the partial index of that state, so that a rare state is as
-- quick to list as a common one. PENDING and FAILED had theirs (migration 0003); they
-- take the id, the listing's tie-break, and the rare terminal states get theirs.
-- SUCCEEDED, the common state, walks the listing index above.
DROP INDEX outbox_deliveries_endpoint_pending;
CREATE INDEX outbox_deliveries_endpoint_pending ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'PENDING';
DROP INDEX outbox_deliveries_endpoint_failed;
CREATE INDEX outbox_deliveries_endpoint_failed ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'FAILED';
CREATE INDEX outbox_deliveries_endpoint_dead ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'DEAD';
CREATE INDEX outbox_deliveries_endpoint_dropped ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'DROPPED';
