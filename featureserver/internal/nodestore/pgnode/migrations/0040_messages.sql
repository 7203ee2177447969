-- +goose Up
-- The SMS messages the REST API's Messages route sent (issue 27): simulated, so
-- recorded, with the status its actionHook was told.
CREATE TABLE fs_messages (
	message_sid text PRIMARY KEY,
	account_sid text NOT NULL,
	from_number text NOT NULL,
	to_number   text NOT NULL,
	body        text NOT NULL,
	media       text NOT NULL,
	status      text NOT NULL,
	created_at  timestamptz NOT NULL
);
CREATE INDEX fs_messages_account ON fs_messages(account_sid, created_at);

