-- +goose Up
-- What a call cut short by a crash needs for its final status notification at the
-- next start (nodestore.Call.Recovery): kept beside the record, which the API shows,
-- since it holds the status hook's credentials (issue 13).
ALTER TABLE fs_calls ADD COLUMN recovery TEXT;
