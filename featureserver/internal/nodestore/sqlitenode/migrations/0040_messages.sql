-- +goose Up
-- The SMS messages the REST API's Messages route sent (issue 27): simulated, so
-- recorded, with the status its actionHook was told.
CREATE TABLE fs_messages (
    message_sid TEXT PRIMARY KEY,
    account_sid TEXT NOT NULL,
    from_number TEXT NOT NULL,
    to_number   TEXT NOT NULL,
    body        TEXT NOT NULL,
    media       TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX fs_messages_account ON fs_messages(account_sid, created_at);

