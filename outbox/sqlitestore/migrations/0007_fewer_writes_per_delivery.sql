-- +goose Up
-- Fewer writes per delivery (issue 28, docs/outbox.md §5 "Indexes"). The single writer
-- bounds the outbox's rate, and most of its work was B-tree writes: a delivery that
-- succeeded at its first try wrote its row into ten indexes and an attempt row.
--
-- A delivery's latest attempt lives in its row: a first try that succeeds writes no
-- attempt row. When a later attempt is recorded, the one before moves to
-- outbox_attempts. attempt_number NULL means every attempt of the delivery is in
-- outbox_attempts: none yet, or a delivery written before this migration, whose
-- attempts are read where they are.
ALTER TABLE outbox_deliveries ADD COLUMN attempt_number INTEGER;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_at INTEGER;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_scheduled_at INTEGER;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_duration_us INTEGER;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_status INTEGER;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_class TEXT;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_error TEXT;
ALTER TABLE outbox_deliveries ADD COLUMN attempt_response TEXT;

-- The account's delivery log merges its endpoints' logs (each walking
-- outbox_deliveries_endpoint_listing), reading a page and one row per endpoint.
DROP INDEX outbox_deliveries_account;
-- The retention purge walks each endpoint's log from its oldest end instead.
DROP INDEX outbox_deliveries_created;
-- An endpoint's waiting deliveries: those a pause or disable moves
-- (moveWaitingSQL) and, with the few leased ones (outbox_deliveries_leased), its
-- PENDING log. A delivery leased as it is published never enters it.
DROP INDEX outbox_deliveries_endpoint_pending;
CREATE INDEX outbox_deliveries_endpoint_waiting ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'PENDING' AND lease_until IS NULL;
