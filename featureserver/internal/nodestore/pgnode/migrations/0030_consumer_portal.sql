-- +goose Up
-- The consumer portal (issue 29), as sqlitenode's 0030_consumer_portal.
ALTER TABLE fs_console_sessions ADD COLUMN portal text NOT NULL DEFAULT '';
CREATE TABLE fs_portal_links (
	id_hash     text PRIMARY KEY,
	id          text NOT NULL,
	account_sid text NOT NULL REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	endpoints   jsonb NOT NULL,
	created_by  text NOT NULL,
	created_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL,
	used_at     timestamptz
);
CREATE INDEX fs_portal_links_expiry ON fs_portal_links(expires_at);
CREATE TABLE fs_portal_settings (
	account_sid     text PRIMARY KEY REFERENCES fs_accounts(sid) ON DELETE CASCADE,
	frame_ancestors jsonb NOT NULL
);
