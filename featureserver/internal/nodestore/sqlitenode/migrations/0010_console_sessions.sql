-- +goose Up
-- The web console's sessions (issue 24): in the database, so that they survive a
-- restart, bounded per account. The session's secret is kept as its hash only.
CREATE TABLE fs_console_sessions (
    id_hash      TEXT PRIMARY KEY,
    account_sid  TEXT NOT NULL,
    token_hash   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX fs_console_sessions_account ON fs_console_sessions(account_sid, last_seen_at);
CREATE INDEX fs_console_sessions_expiry ON fs_console_sessions(expires_at);
