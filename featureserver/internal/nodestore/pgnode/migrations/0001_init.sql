-- +goose Up
-- The node's records on PostgreSQL, as internal/nodestore/sqlitenode keeps them on
-- SQLite: the same tables, with PostgreSQL's types. Times are timestamptz at
-- millisecond precision; a call's record is its JSON, kept as written (json, not
-- jsonb, whose normalisation would reorder a timeline's events' keys).

CREATE TABLE fs_accounts (
	sid            text PRIMARY KEY,
	name           text NOT NULL,
	webhook_secret text NOT NULL,
	created_at     timestamptz NOT NULL
);

CREATE TABLE fs_api_tokens (
	token_hash  text PRIMARY KEY,
	account_sid text NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	origin      text NOT NULL,
	created_at  timestamptz NOT NULL
);
CREATE INDEX fs_api_tokens_account ON fs_api_tokens(account_sid);

CREATE TABLE fs_applications (
	sid              text PRIMARY KEY,
	account_sid      text NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	name             text NOT NULL,
	call_hook        json NOT NULL,
	call_status_hook json NOT NULL,
	created_at       timestamptz NOT NULL
);
CREATE INDEX fs_applications_account ON fs_applications(account_sid, created_at, sid);

CREATE TABLE fs_alerts (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_sid text NOT NULL,
	type        text NOT NULL,
	call_sid    text NOT NULL,
	url         text NOT NULL,
	detail      text NOT NULL,
	at          timestamptz NOT NULL
);
CREATE INDEX fs_alerts_account_time ON fs_alerts(account_sid, at, id);

CREATE TABLE fs_calls (
	sid             text PRIMARY KEY,
	account_sid     text NOT NULL,
	application_sid text NOT NULL,
	record          json NOT NULL,
	active          boolean NOT NULL,
	created_at      timestamptz NOT NULL,
	-- the node that runs the call, whose lease holds it (fs_nodes)
	node_id         text NOT NULL
);
CREATE INDEX fs_calls_account_time ON fs_calls(account_sid, created_at DESC, sid);
CREATE INDEX fs_calls_active ON fs_calls(node_id) WHERE active;

-- Each node's lease on its calls, renewed while it runs, by the database's clock.
CREATE TABLE fs_nodes (
	id          text PRIMARY KEY,
	url         text NOT NULL,
	lease_until timestamptz NOT NULL
);

CREATE TABLE fs_status_hooks (
	account_sid text NOT NULL,
	url         text NOT NULL,
	method      text NOT NULL,
	username    text NOT NULL,
	password    text NOT NULL,
	updated_at  timestamptz NOT NULL,
	PRIMARY KEY (account_sid, url)
);

CREATE TABLE fs_account_notifications (
	account_sid text PRIMARY KEY REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	webhook_url text NOT NULL,
	emails      json NOT NULL,
	updated_at  timestamptz NOT NULL
);
