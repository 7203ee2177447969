-- +goose Up
-- Fewer writes per delivery (issue 28, docs/outbox.md §5). A delivery's row is
-- written three times or so (stored, leased, recorded), and each new version of it
-- takes an entry in every index whose predicate it meets: an index every delivery
-- is in costs it three entries, and the publishes, claims and completions of all
-- nodes pay them on the database's cores.
--
-- The account's delivery log merges its endpoints' logs (each on
-- outbox_deliveries_endpoint_listing), and the retention purge walks each endpoint's
-- log from its oldest end.
DROP INDEX outbox_deliveries_account;
DROP INDEX outbox_deliveries_created;
-- An endpoint's waiting deliveries: those a pause, disable or removal moves
-- (moveWaitingSQL) and, with the few leased ones, its PENDING log. A delivery
-- leased as it is published never enters it, nor does a claimed one's new version.
DROP INDEX outbox_deliveries_endpoint_pending;
CREATE INDEX outbox_deliveries_endpoint_waiting ON outbox_deliveries (endpoint_id, created_at, id)
    WHERE status = 'PENDING' AND lease_until IS NULL;
