-- +goose Up
-- The outbox on PostgreSQL (docs/outbox.md §5). Times are timestamptz (microseconds,
-- as SQLite's integers); event data is kept byte for byte (bytea): it is signed as
-- published. Endpoint filters, secrets and overrides are the JSON the outbox marshals.

CREATE TABLE outbox_endpoints (
    id               text PRIMARY KEY,
    account          text NOT NULL,
    url              text NOT NULL,
    events           jsonb NOT NULL,
    api_version      text NOT NULL,
    secrets          jsonb NOT NULL,
    profile          text NOT NULL,
    overrides        jsonb NOT NULL,
    managed          boolean NOT NULL,
    status           text NOT NULL,
    failures         integer NOT NULL DEFAULT 0,
    failing_since    timestamptz,
    last_delivery_at timestamptz,
    paused_at        timestamptz,
    pause_reason     text NOT NULL DEFAULT '',
    disabled_at      timestamptz,
    hold_until       timestamptz,
    removed_at       timestamptz,
    created_at       timestamptz NOT NULL,
    in_flight_cap    integer NOT NULL,
    -- in_flight counts the endpoint's leased deliveries. Whoever leases or releases
    -- one holds the endpoint's row lock and updates it, so a claim reads the count
    -- as committed by the last holder (a row locked FOR UPDATE is read in its latest
    -- version), where counting leased rows would read the claim's older snapshot and
    -- could pass the cap under concurrent claims.
    in_flight        integer NOT NULL DEFAULT 0 CHECK (in_flight >= 0)
);
CREATE INDEX outbox_endpoints_account ON outbox_endpoints (account, created_at);

CREATE TABLE outbox_events (
    id         text PRIMARY KEY,
    account    text NOT NULL,
    type       text NOT NULL,
    created_at timestamptz NOT NULL,
    -- stored_at drives retention: created_at may be supplied by the publisher.
    stored_at  timestamptz NOT NULL,
    data       bytea NOT NULL
);
CREATE INDEX outbox_events_account ON outbox_events (account, created_at, id);
CREATE INDEX outbox_events_stored ON outbox_events (stored_at);

CREATE TABLE outbox_deliveries (
    id              text PRIMARY KEY,
    account         text NOT NULL,
    event_id        text NOT NULL,
    event_type      text NOT NULL,
    endpoint_id     text NOT NULL,
    status          text NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    run_start       integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    lease_until     timestamptz,
    lease_token     text,
    fault_since     timestamptz,
    last_error      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
-- Due deliveries, in order: the claim walks this index, NextDue reads its first entry.
CREATE INDEX outbox_deliveries_due ON outbox_deliveries (next_attempt_at, id)
    WHERE status = 'PENDING' AND lease_until IS NULL;
-- Deliveries in flight (a few rows): the reaper.
CREATE INDEX outbox_deliveries_leased ON outbox_deliveries (lease_until)
    WHERE lease_until IS NOT NULL;
-- An endpoint's waiting deliveries (pause, disable, removal) and failed ones
-- (recover): a delivery that succeeds leaves both.
CREATE INDEX outbox_deliveries_endpoint_pending ON outbox_deliveries (endpoint_id, created_at)
    WHERE status = 'PENDING';
CREATE INDEX outbox_deliveries_endpoint_failed ON outbox_deliveries (endpoint_id, created_at)
    WHERE status = 'FAILED';
CREATE INDEX outbox_deliveries_account ON outbox_deliveries (account, created_at, id);
CREATE INDEX outbox_deliveries_event ON outbox_deliveries (event_id);
-- The retention purge walks deliveries by age.
CREATE INDEX outbox_deliveries_created ON outbox_deliveries (created_at);

CREATE TABLE outbox_attempts (
    delivery_id  text NOT NULL,
    number       integer NOT NULL,
    at           timestamptz NOT NULL,
    scheduled_at timestamptz NOT NULL,
    duration_us  bigint NOT NULL,
    status       integer NOT NULL,
    class        text NOT NULL,
    error        text NOT NULL,
    response     text NOT NULL,
    PRIMARY KEY (delivery_id, number)
);

CREATE TABLE outbox_audit (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account     text NOT NULL,
    endpoint_id text NOT NULL,
    action      text NOT NULL,
    reason      text NOT NULL,
    at          timestamptz NOT NULL
);
CREATE INDEX outbox_audit_account ON outbox_audit (account, id);
