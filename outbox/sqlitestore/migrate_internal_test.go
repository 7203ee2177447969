package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
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

// TestMigrationKeepsDeliveryLog: a database of the release before migration 0007
// (migrations 0001–0006, filled as that release wrote it: every attempt a row of
// outbox_attempts, deliveries in every state, one leased by a claim) keeps its
// delivery log through 0007: each delivery reads with the same attempts, every
// listing (the account's, an endpoint's, each state's) lists the same deliveries in
// the same order, the leased delivery's outcome is recorded after its earlier
// attempts, the due one is claimed, and the purge takes what retention ends.
func TestMigrationKeepsDeliveryLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if base := filepath.Base(name); base < "0007" {
			body, err := migrations.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			old[base] = &fstest.MapFile{Data: body}
		}
	}
	if len(old) != 6 {
		t.Fatalf("the previous release had 6 migrations, found %d", len(old))
	}
	if _, err := migrate.Up(ctx, db, migrate.SQLite, migrate.Line{Table: MigrationTable, FS: old}); err != nil {
		t.Fatal(err)
	}
	// Two endpoints of acct; events at t=100..104 µs; deliveries in each state.
	stmts := []string{
		`INSERT INTO outbox_endpoints (id, account, url, events, api_version, secrets, profile, overrides, managed, status, created_at, in_flight_cap)
			VALUES ('ep_a', 'acct', 'https://a.example/', '["*"]', '', '[]', 'standard', '{}', 0, 'ACTIVE', 1, 10),
			       ('ep_b', 'acct', 'https://b.example/', '["*"]', '', '[]', 'standard', '{}', 0, 'ACTIVE', 2, 10)`,
	}
	type oldDelivery struct {
		id, ep, event, status string
		created, attempts     int
		leased                bool
	}
	olds := []oldDelivery{
		{"dlv_1", "ep_a", "evt_1", "SUCCEEDED", 100, 1, false},
		{"dlv_2", "ep_b", "evt_1", "FAILED", 100, 2, false},
		{"dlv_3", "ep_a", "evt_2", "PENDING", 101, 1, true}, // leased by a claim, token tok_old
		{"dlv_4", "ep_b", "evt_2", "PENDING", 101, 0, false},
		{"dlv_5", "ep_a", "evt_3", "DEAD", 102, 3, false},
		{"dlv_6", "ep_b", "evt_4", "SUCCEEDED", 103, 2, false},
	}
	for e := 1; e <= 4; e++ {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO outbox_events (id, account, type, created_at, stored_at, data)
			VALUES ('evt_%d', 'acct', 't', %d, %d, '{}')`, e, 99+e, 99+e))
	}
	for _, d := range olds {
		lease, token := "NULL", "NULL"
		if d.leased {
			lease, token = "5000000000", "'tok_old'"
		}
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO outbox_deliveries (id, account, event_id, event_type, endpoint_id, status,
			attempts, next_attempt_at, lease_until, lease_token, created_at, updated_at)
			VALUES ('%s', 'acct', '%s', 't', '%s', '%s', %d, 50, %s, %s, %d, %d)`,
			d.id, d.event, d.ep, d.status, d.attempts, lease, token, d.created, d.created))
		for n := 1; n <= d.attempts; n++ {
			stmts = append(stmts, fmt.Sprintf(`INSERT INTO outbox_attempts (delivery_id, number, at, scheduled_at, duration_us, status, class, error, response)
				VALUES ('%s', %d, %d, %d, 800, 500, 'http_5xx', 'HTTP 500 (http_5xx)', 'body %d')`, d.id, n, 200+n, 150+n, n))
		}
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// What the previous release listed and read.
	type view struct {
		lists    map[string][]string
		attempts map[string][]outboxdriver.Attempt
	}
	queries := map[string]outboxdriver.DeliveryQuery{
		"account": {Account: "acct"}, "ep_a": {Account: "acct", EndpointID: "ep_a"}, "ep_b": {Account: "acct", EndpointID: "ep_b"},
		"pending": {Account: "acct", Status: outboxdriver.DeliveryPending}, "ep_a pending": {Account: "acct", EndpointID: "ep_a", Status: outboxdriver.DeliveryPending},
		"failed": {Account: "acct", Status: outboxdriver.DeliveryFailed}, "evt_1": {Account: "acct", EventID: "evt_1"},
		"cursor": {Account: "acct", BeforeID: "dlv_4"},
	}
	read := func(s *Store) view {
		v := view{lists: map[string][]string{}, attempts: map[string][]outboxdriver.Attempt{}}
		for name, q := range queries {
			q.Limit = 100
			ds, err := s.ListDeliveries(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, d := range ds {
				v.lists[name] = append(v.lists[name], d.ID)
			}
		}
		for _, d := range olds {
			_, as, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: d.id})
			if err != nil {
				t.Fatal(err)
			}
			if len(as) > 0 {
				v.attempts[d.id] = as
			}
		}
		return v
	}
	want := view{lists: map[string][]string{
		"account": {"dlv_6", "dlv_5", "dlv_4", "dlv_3", "dlv_2", "dlv_1"}, "ep_a": {"dlv_5", "dlv_3", "dlv_1"}, "ep_b": {"dlv_6", "dlv_4", "dlv_2"},
		"pending": {"dlv_4", "dlv_3"}, "ep_a pending": {"dlv_3"}, "failed": {"dlv_2"}, "evt_1": {"dlv_2", "dlv_1"},
		"cursor": {"dlv_3", "dlv_2", "dlv_1"},
	}, attempts: map[string][]outboxdriver.Attempt{}}
	for _, d := range olds {
		for n := 1; n <= d.attempts; n++ {
			want.attempts[d.id] = append(want.attempts[d.id], outboxdriver.Attempt{DeliveryID: d.id, Number: n,
				At: time.UnixMicro(int64(200 + n)).UTC(), ScheduledAt: time.UnixMicro(int64(150 + n)).UTC(), Duration: 800 * time.Microsecond,
				Status: 500, Class: outboxdriver.ClassHTTP5xx, Error: "HTTP 500 (http_5xx)", Response: fmt.Sprintf("body %d", n)})
		}
	}
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := read(s); !reflect.DeepEqual(got.lists, want.lists) || !reflect.DeepEqual(got.attempts, want.attempts) {
		t.Fatalf("after the migration:\n%+v\nwant\n%+v", got, want)
	}

	// The leased delivery's outcome: attempt 2 joins attempt 1, which stays a row.
	now := time.UnixMicro(1000)
	success := func(d outboxdriver.Delivery, ep outboxdriver.Endpoint) (outboxdriver.Change, error) {
		nd := d
		nd.Status, nd.Attempts, nd.UpdatedAt = outboxdriver.DeliverySucceeded, d.Attempts+1, now
		return outboxdriver.Change{Delivery: &nd, Attempt: &outboxdriver.Attempt{DeliveryID: d.ID, Number: nd.Attempts,
			At: now, ScheduledAt: d.NextAttemptAt, Duration: time.Millisecond, Status: 204, Class: outboxdriver.ClassSuccess}}, nil
	}
	applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: "dlv_3", Token: "tok_old", Decide: success}})
	if err != nil || !applied[0] {
		t.Fatalf("complete the delivery leased before the migration: %v %v", applied, err)
	}
	_, as, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: "dlv_3"})
	if err != nil || len(as) != 2 || as[0] != want.attempts["dlv_3"][0] || as[1].Number != 2 || as[1].Class != outboxdriver.ClassSuccess {
		t.Fatalf("attempts of dlv_3 after its outcome: %+v %v", as, err)
	}
	// The due one is claimed, and its outcome's attempt is its first.
	jobs, err := s.Claim(ctx, outboxdriver.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Limit: 10, Token: "tok"})
	if err != nil || len(jobs) != 1 || jobs[0].Delivery.ID != "dlv_4" || jobs[0].Event.ID != "evt_2" {
		t.Fatalf("claim after the migration: %+v %v", jobs, err)
	}
	if applied, err := s.Complete(ctx, []outboxdriver.Completion{{DeliveryID: "dlv_4", Token: "tok", Decide: success}}); err != nil || !applied[0] {
		t.Fatalf("complete dlv_4: %v %v", applied, err)
	}
	if _, as, err := s.GetDelivery(ctx, outboxdriver.GetDeliveryParams{Account: "acct", ID: "dlv_4"}); err != nil || len(as) != 1 || as[0].Number != 1 {
		t.Fatalf("attempts of dlv_4: %+v %v", as, err)
	}
	// Retention ends the deliveries created before 102 µs with their attempts, and
	// their events.
	deliveries, events, err := s.Purge(ctx, outboxdriver.PurgeParams{Before: time.UnixMicro(102), Limit: 100})
	if err != nil || deliveries != 4 || events != 2 {
		t.Fatalf("purge: %d deliveries, %d events, %v", deliveries, events, err)
	}
	var attempts int
	if err := s.db.QueryRow(`SELECT count(*) FROM outbox_attempts`).Scan(&attempts); err != nil || attempts != 3+2 {
		t.Fatalf("%d attempt rows left, want those of dlv_5 and dlv_6 (%v)", attempts, err)
	}
	if ds, err := s.ListDeliveries(ctx, outboxdriver.DeliveryQuery{Account: "acct", Limit: 100}); err != nil || len(ds) != 2 {
		t.Fatalf("after the purge: %+v %v", ds, err)
	}
}
