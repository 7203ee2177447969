-- +goose Up
-- Where an account's webhook endpoint notices go (paused, disabled, removed): its
-- operational webhook URL and e-mail recipients (docs/outbox.md §3; issue 15).
CREATE TABLE fs_account_notifications (
    account_sid TEXT PRIMARY KEY REFERENCES fs_accounts(sid) ON DELETE CASCADE,
    webhook_url TEXT NOT NULL,
    emails      TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);
