-- +goose Up
CREATE TABLE IF NOT EXISTS fs_accounts (
	sid            TEXT PRIMARY KEY,
	name           TEXT NOT NULL,
	webhook_secret TEXT NOT NULL,
	created_at     INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS fs_api_tokens (
	token_hash  TEXT PRIMARY KEY,
	account_sid TEXT NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	created_at  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS fs_applications (
	sid                  TEXT PRIMARY KEY,
	account_sid          TEXT NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	name                 TEXT NOT NULL,
	call_hook            TEXT NOT NULL,
	call_status_hook     TEXT NOT NULL,
	created_at           INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fs_applications_account ON fs_applications(account_sid);

CREATE TABLE IF NOT EXISTS fs_alerts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	account_sid TEXT NOT NULL,
	type        TEXT NOT NULL,
	call_sid    TEXT NOT NULL,
	url         TEXT NOT NULL,
	detail      TEXT NOT NULL,
	at_ms       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fs_alerts_account_time ON fs_alerts(account_sid, at_ms);

CREATE TABLE IF NOT EXISTS fs_calls (
	sid             TEXT PRIMARY KEY,
	account_sid     TEXT NOT NULL,
	application_sid TEXT NOT NULL,
	record          TEXT NOT NULL,
	created_at_ms   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS fs_calls_account_time ON fs_calls(account_sid, created_at_ms);
