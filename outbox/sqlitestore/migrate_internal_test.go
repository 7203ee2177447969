package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/switchboard-voice/switchboard/internal/migrate"

	"github.com/switchboard-voice/switchboard/outbox/outboxdriver"
)

// TestMigrationKeepsEventsPerAccount: a database written before event ids became
// per-account (migrations 0001–0003) keeps its events and deliveries through
// migration 0004: they read, claim and deduplicate as before, and the id can now be
// published in another account too.
func TestMigrationKeepsEventsPerAccount(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// The schema as migrations 0001-0003 left it.
	old := fstest.MapFS{}
	for _, name := range []string{"0001_init.sql", "0002_covering_claim_indexes.sql", "0003_purge_and_endpoint_indexes.sql"} {
		body, err := migrations.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: body}
	}
	if _, err := migrate.Up(ctx, db, migrate.SQLite, migrate.Line{Table: MigrationTable, FS: old}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO outbox_endpoints (id, account, url, events, api_version, secrets, profile, overrides, managed, status, created_at, in_flight_cap)
			VALUES ('ep_1', 'acct', 'https://example.com/', '["*"]', '', '[]', 'standard', '{}', 0, 'ACTIVE', 1, 10)`,
		`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data) VALUES ('evt_old', 'acct', 't', 1, 1, '{"a":1}')`,
		`INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status, next_attempt_at, created_at, updated_at)
			VALUES ('dlv_1', 'acct', 'evt_old', 't', 'ep_1', 'PENDING', 1, 1, 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.GetEvent(ctx, outboxdriver.GetEventParams{Account: "acct", ID: "evt_old"}); err != nil || string(ev.Data) != `{"a":1}` {
		t.Fatalf("event after the migration: %+v %v", ev, err)
	}
	none := func(outboxdriver.Endpoint) (outboxdriver.Delivery, *outboxdriver.Attempt, bool) {
		return outboxdriver.Delivery{}, nil, false
	}
	dup, err := s.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "evt_old", Account: "acct", Type: "t", Data: []byte(`{"a":1}`)}, Now: time.Now(), Plan: none})
	if err != nil || !dup.Duplicate || len(dup.Deliveries) != 1 {
		t.Fatalf("republish after the migration: %+v %v", dup, err)
	}
	if pub, err := s.Publish(ctx, outboxdriver.PublishParams{Event: outboxdriver.Event{ID: "evt_old", Account: "other", Type: "t", Data: []byte(`{"b":1}`)}, Now: time.Now(), Plan: none}); err != nil || pub.Duplicate {
		t.Fatalf("the id in another account: %+v %v", pub, err)
	}
	now := time.UnixMicro(10)
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok"})
	if err != nil || len(jobs) != 1 || jobs[0].Event.ID != "evt_old" || jobs[0].Event.Account != "acct" {
		t.Fatalf("claim after the migration: %+v %v", jobs, err)
	}
}
