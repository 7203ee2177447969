-- +goose Up
-- Issue 29: an endpoint's own headers, channels, payload filter and rate limit, and
-- the channels and filter exclusions of an event (docs/outbox.md §1). Lists and maps
-- are JSON text, empty for none (as SQLite keeps them); the filter is the JSON the
-- account gave.
ALTER TABLE outbox_endpoints ADD COLUMN headers text NOT NULL DEFAULT '';
ALTER TABLE outbox_endpoints ADD COLUMN channels text NOT NULL DEFAULT '';
ALTER TABLE outbox_endpoints ADD COLUMN filter text NOT NULL DEFAULT '';
-- rate_limit is deliveries per second (0: none); rate_tat is the time its bucket
-- would be empty again, which only claims change, under the endpoint's row lock.
ALTER TABLE outbox_endpoints ADD COLUMN rate_limit integer NOT NULL DEFAULT 0;
ALTER TABLE outbox_endpoints ADD COLUMN rate_tat timestamptz;
ALTER TABLE outbox_events ADD COLUMN channels text NOT NULL DEFAULT '';
ALTER TABLE outbox_events ADD COLUMN excluded text NOT NULL DEFAULT '';
