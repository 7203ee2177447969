-- +goose Up
-- Times are Unix microseconds (UTC); JSON columns hold what the outbox package
-- marshals (event filter, secrets, overrides).

CREATE TABLE outbox_endpoints (
    id               TEXT PRIMARY KEY,
    account          TEXT NOT NULL,
    url              TEXT NOT NULL,
    events           TEXT NOT NULL,
    api_version      TEXT NOT NULL,
    secrets          TEXT NOT NULL,
    profile          TEXT NOT NULL,
    overrides        TEXT NOT NULL,
    managed          INTEGER NOT NULL,
    status           TEXT NOT NULL,
    failures         INTEGER NOT NULL DEFAULT 0,
    failing_since    INTEGER,
    last_delivery_at INTEGER,
    paused_at        INTEGER,
    pause_reason     TEXT NOT NULL DEFAULT '',
    disabled_at      INTEGER,
    hold_until       INTEGER,
    removed_at       INTEGER,
    created_at       INTEGER NOT NULL,
    in_flight_cap    INTEGER NOT NULL
);
CREATE INDEX outbox_endpoints_account ON outbox_endpoints (account, created_at);

CREATE TABLE outbox_events (
    id         TEXT PRIMARY KEY,
    account    TEXT NOT NULL,
    type       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    -- stored_at drives retention: created_at may be supplied by the publisher.
    stored_at  INTEGER NOT NULL,
    data       BLOB NOT NULL
);
CREATE INDEX outbox_events_account ON outbox_events (account, created_at, id);
CREATE INDEX outbox_events_stored ON outbox_events (stored_at);

CREATE TABLE outbox_deliveries (
    id              TEXT PRIMARY KEY,
    account         TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    run_start       INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,
    lease_token     TEXT,
    fault_since     INTEGER,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- Due deliveries, in order: the claim walks this index only.
CREATE INDEX outbox_deliveries_due ON outbox_deliveries (next_attempt_at)
    WHERE status = 'PENDING' AND lease_until IS NULL;
-- Deliveries in flight (a few rows): per-endpoint caps and the reaper.
CREATE INDEX outbox_deliveries_leased ON outbox_deliveries (endpoint_id, lease_until)
    WHERE lease_until IS NOT NULL;
CREATE INDEX outbox_deliveries_endpoint ON outbox_deliveries (endpoint_id, status, created_at);
CREATE INDEX outbox_deliveries_account ON outbox_deliveries (account, created_at, id);
CREATE INDEX outbox_deliveries_event ON outbox_deliveries (event_id);

CREATE TABLE outbox_attempts (
    delivery_id  TEXT NOT NULL,
    number       INTEGER NOT NULL,
    at           INTEGER NOT NULL,
    scheduled_at INTEGER NOT NULL,
    duration_us  INTEGER NOT NULL,
    status       INTEGER NOT NULL,
    class        TEXT NOT NULL,
    error        TEXT NOT NULL,
    response     TEXT NOT NULL,
    PRIMARY KEY (delivery_id, number)
) WITHOUT ROWID;

CREATE TABLE outbox_audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account     TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    action      TEXT NOT NULL,
    reason      TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX outbox_audit_account ON outbox_audit (account, id);
