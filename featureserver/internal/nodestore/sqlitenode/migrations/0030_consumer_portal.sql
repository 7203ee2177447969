-- +goose Up
-- The consumer portal (issue 29): a session may be a portal's, confined to a scope
-- (JSON; '' for an account's own session); magic links, single-use, kept as their
-- secret's hash; the origins that may frame the portal.
ALTER TABLE fs_console_sessions ADD COLUMN portal TEXT NOT NULL DEFAULT '';
CREATE TABLE fs_portal_links (
    id_hash     TEXT PRIMARY KEY,
    id          TEXT NOT NULL,
    account_sid TEXT NOT NULL,
    endpoints   TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
);
CREATE INDEX fs_portal_links_expiry ON fs_portal_links(expires_at);
CREATE TABLE fs_portal_settings (
    account_sid     TEXT PRIMARY KEY,
    frame_ancestors TEXT NOT NULL
);
