-- +goose Up
-- Event ids are unique per account, not across accounts (docs/outbox.md §1): the same
-- id published in two accounts is two events, and one account never learns that
-- another used an id. A delivery names its event by (account, event id).
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_pkey;
ALTER TABLE outbox_events ADD PRIMARY KEY (account, id);
DROP INDEX outbox_deliveries_event;
CREATE INDEX outbox_deliveries_event ON outbox_deliveries (account, event_id);

-- An endpoint's delivery log, newest first, walks an index of its own, and a status
-- filter the partial index of that state (docs/outbox.md §5).
CREATE INDEX outbox_deliveries_endpoint_listing ON outbox_deliveries (endpoint_id, created_at, id);
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

-- The audit log names who made each change (an API token, or the outbox itself), the
-- delivery of a manual retry and how many deliveries a recover queued.
ALTER TABLE outbox_audit ADD COLUMN actor text NOT NULL DEFAULT 'system';
ALTER TABLE outbox_audit ADD COLUMN delivery_id text NOT NULL DEFAULT '';
ALTER TABLE outbox_audit ADD COLUMN count integer NOT NULL DEFAULT 0;
CREATE INDEX outbox_audit_endpoint ON outbox_audit (endpoint_id, id);
