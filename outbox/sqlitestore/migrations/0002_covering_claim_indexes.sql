-- +goose Up
-- The claim reads only these columns of due deliveries: with all of them in the due
-- index it walks the index alone, without a table lookup per delivery (status and
-- lease_until are constant here, but the planner needs them to cover the query).
DROP INDEX outbox_deliveries_due;
CREATE INDEX outbox_deliveries_due ON outbox_deliveries (next_attempt_at, endpoint_id, id, status, lease_until)
    WHERE status = 'PENDING' AND lease_until IS NULL;

-- Likewise for the endpoint each due delivery joins.
CREATE INDEX outbox_endpoints_claim ON outbox_endpoints (id, status, removed_at, hold_until, in_flight_cap);
