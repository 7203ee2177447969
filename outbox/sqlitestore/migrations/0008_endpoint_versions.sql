-- +goose Up
-- Each endpoint row carries a version that every insert and update changes (issue 28,
-- docs/outbox.md §5 "Claiming"): a claim reads the version of each endpoint it meets
-- and reads the whole row, and decodes it, only when the version is not one it has
-- read before. The version is random, not a counter: a version read inside a
-- transaction that then rolled back is never given to a later change, so a copy
-- cached from it is never taken for the row. The triggers make every writer change
-- it, whatever statement it uses, another process's included.
ALTER TABLE outbox_endpoints ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
UPDATE outbox_endpoints SET version = random();
-- +goose StatementBegin
CREATE TRIGGER outbox_endpoints_version_insert AFTER INSERT ON outbox_endpoints
BEGIN
    UPDATE outbox_endpoints SET version = random() WHERE rowid = NEW.rowid;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER outbox_endpoints_version_update AFTER UPDATE ON outbox_endpoints
WHEN NEW.version IS OLD.version
BEGIN
    UPDATE outbox_endpoints SET version = random() WHERE rowid = NEW.rowid;
END;
-- +goose StatementEnd
