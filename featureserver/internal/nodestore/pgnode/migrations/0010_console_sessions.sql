-- +goose Up
-- The web console's sessions (issue 24), as sqlitenode's 0010_console_sessions:
-- shared by the nodes, so that a session opened on one works on every other.
CREATE TABLE fs_console_sessions (
	id_hash      text PRIMARY KEY,
	account_sid  text NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	token_hash   text NOT NULL,
	created_at   timestamptz NOT NULL,
	last_seen_at timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL
);
CREATE INDEX fs_console_sessions_account ON fs_console_sessions(account_sid, last_seen_at);
CREATE INDEX fs_console_sessions_expiry ON fs_console_sessions(expires_at);
